package io.github.idempotency.testservers;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

import com.rabbitmq.client.ConnectionFactory;
import com.redis.testcontainers.RedisContainer;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.mariadb.MariaDBContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * Finds the servers the tests run against, once per test JVM, in this order: the address
 * the environment names ({@code IDEMPOTENCY_TEST_*}); else the server on its standard
 * local address, when a login there succeeds; else a Testcontainers container, when a
 * Docker engine answers. With none of them, the test fails with a message that names
 * all three: it never skips. A Redis Cluster the environment does not name is started
 * from {@code redis-server} by {@link RedisServerProcess#startCluster()}.
 */
public final class TestServers {

	private static final String CLUSTER_VARIABLE = "IDEMPOTENCY_TEST_REDIS_CLUSTER_NODES";

	private static final Map<String, String> found = new ConcurrentHashMap<>();

	private TestServers() {
	}

	/**
	 * @return a PostgreSQL JDBC URL with its credentials
	 */
	public static String postgresUrl() {
		return find("IDEMPOTENCY_TEST_POSTGRES_URL", "PostgreSQL",
				"jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
				(url) -> login(url, "connectTimeout", "2", "loginTimeout", "3", "socketTimeout", "3"), () -> {
					PostgreSQLContainer container = new PostgreSQLContainer("postgres:16-alpine");
					container.start();
					return container.getJdbcUrl() + "&user=" + container.getUsername() + "&password="
							+ container.getPassword();
				});
	}

	/**
	 * @return a MariaDB JDBC URL with its credentials
	 */
	public static String mariaDbUrl() {
		return find("IDEMPOTENCY_TEST_MARIADB_URL", "MariaDB", "jdbc:mariadb://127.0.0.1:3306/test?user=root",
				(url) -> login(url, "connectTimeout", "2000", "socketTimeout", "3000"), () -> {
					MariaDBContainer container = new MariaDBContainer("mariadb:11");
					container.start();
					return container.getJdbcUrl() + "?user=" + container.getUsername() + "&password="
							+ container.getPassword();
				});
	}

	/**
	 * The R2DBC URL of a JDBC URL from here:
	 * {@code jdbc:postgresql://host:port/db?user=u&password=p} becomes
	 * {@code r2dbc:postgresql://u:p@host:port/db} (R2DBC takes the user and the password only
	 * before the host; the other options stay).
	 * @param jdbcUrl {@link #postgresUrl()} or {@link #mariaDbUrl()}
	 * @return the URL, for {@code ConnectionFactories.get}
	 */
	public static String r2dbcUrl(String jdbcUrl) {
		return r2dbcUrl(jdbcUrl, "r2dbc:", new StringBuilder());
	}

	/**
	 * {@link #r2dbcUrl(String)}, pooled: {@code r2dbc:pool:postgresql://u:p@host:port/db?maxSize=N}.
	 * @param jdbcUrl {@link #postgresUrl()} or {@link #mariaDbUrl()}
	 * @param maxSize the pool's size
	 * @return the URL, for {@code ConnectionFactories.get} with r2dbc-pool present
	 */
	public static String r2dbcUrl(String jdbcUrl, int maxSize) {
		return r2dbcUrl(jdbcUrl, "r2dbc:pool:", new StringBuilder("maxSize=" + maxSize));
	}

	private static String r2dbcUrl(String jdbcUrl, String prefix, StringBuilder options) {
		URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
		String user = null;
		String password = null;
		if (uri.getRawQuery() != null) {
			for (String option : uri.getRawQuery().split("&")) {
				String[] pair = option.split("=", 2);
				String value = (pair.length > 1) ? pair[1] : "";
				switch (pair[0]) {
					case "user" -> user = value;
					case "password" -> password = value;
					default -> options.append((options.length() > 0) ? "&" : "").append(option);
				}
			}
		}
		String login = (user != null) ? user + ((password != null) ? ":" + password : "") + "@" : "";
		return prefix + uri.getScheme() + "://" + login + uri.getHost() + ((uri.getPort() > 0) ? ":" + uri.getPort() : "")
				+ uri.getRawPath() + ((options.length() > 0) ? "?" + options : "");
	}

	/**
	 * @return a Redis URL ({@code redis://host:port}) of a single node
	 */
	public static String redisUrl() {
		return find("IDEMPOTENCY_TEST_REDIS_URL", "Redis", "redis://127.0.0.1:6379", (url) -> {
			URI uri = URI.create(url);
			RedisServerProcess.ping(uri.getHost(), uri.getPort());
		}, () -> {
			RedisContainer container = new RedisContainer(RedisContainer.DEFAULT_IMAGE_NAME);
			container.start();
			return container.getRedisURI();
		});
	}

	/**
	 * The nodes of a Redis Cluster: those the environment names, else three masters the
	 * tests start themselves (from {@code redis-server}, else in containers).
	 * @return {@code host:port} of each master, comma-separated
	 */
	public static String redisClusterNodes() {
		String nodes = System.getenv(CLUSTER_VARIABLE);
		if (nodes != null && !nodes.isBlank()) {
			return nodes;
		}
		return found.computeIfAbsent(CLUSTER_VARIABLE, (name) -> {
			try {
				return RedisServerProcess.startCluster();
			}
			catch (RuntimeException ex) {
				throw new IllegalStateException("This test needs a Redis Cluster and could not start one. Any of "
						+ "these will do: set " + CLUSTER_VARIABLE + " to its masters (for example " + CLUSTER_VARIABLE
						+ "='127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103'); or install redis-server, which the "
						+ "tests run on spare ports; or start a Docker engine, which runs it in containers", ex);
			}
		});
	}

	/**
	 * @return a RabbitMQ URL with its credentials ({@code amqp://user:password@host:port})
	 */
	public static String rabbitMqUrl() {
		return find("IDEMPOTENCY_TEST_RABBITMQ_URL", "RabbitMQ", "amqp://guest:guest@127.0.0.1:5672", (url) -> {
			ConnectionFactory connections = new ConnectionFactory();
			connections.setUri(url);
			connections.setConnectionTimeout(2000);
			connections.setHandshakeTimeout(3000);
			connections.setAutomaticRecoveryEnabled(false);
			connections.newConnection("idempotency-test-probe").close();
		}, () -> {
			RabbitMQContainer container = new RabbitMQContainer("rabbitmq:4-alpine");
			container.start();
			return "amqp://" + container.getAdminUsername() + ":" + container.getAdminPassword() + "@"
					+ container.getHost() + ":" + container.getAmqpPort();
		});
	}

	/**
	 * The address the environment gives for {@code variable}; else {@code local} when
	 * {@code login} succeeds there; else a started container when a Docker engine answers.
	 * @param variable the environment variable
	 * @param server the server's name, for the failure message
	 * @param local the server's standard local address
	 * @param login logs in at an address, or throws why it cannot
	 * @param container starts a container and returns its address
	 * @return the address
	 */
	private static String find(String variable, String server, String local, Login login,
			Supplier<String> container) {
		String value = System.getenv(variable);
		if (value != null && !value.isBlank()) {
			return value;
		}
		return found.computeIfAbsent(variable, (name) -> {
			try {
				login.check(local);
				return local;
			}
			catch (Exception ex) {
				if (dockerAvailable()) {
					return container.get();
				}
				throw new IllegalStateException("This test needs " + server + " and finds none. Any of these will "
						+ "do: set " + variable + " to its address (for example " + variable + "='" + local
						+ "'); or run it on its standard local address, " + local + " (there it fails: " + ex
						+ "); or start a Docker engine, so that Testcontainers runs one (none answers)", ex);
			}
		});
	}

	/**
	 * Opens and closes one JDBC connection.
	 * @param url the JDBC URL
	 * @param timeouts the driver's timeout properties: name, value, name, value...
	 * @throws Exception why it cannot log in
	 */
	private static void login(String url, String... timeouts) throws Exception {
		Properties properties = new Properties();
		for (int i = 0; i < timeouts.length; i += 2) {
			properties.setProperty(timeouts[i], timeouts[i + 1]);
		}
		DriverManager.getConnection(url, properties).close();
	}

	static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	@FunctionalInterface
	private interface Login {

		void check(String address) throws Exception;

	}

	/**
	 * Whether an executable {@code program} is in a directory of the {@code PATH}.
	 * @param program the program's file name
	 * @return {@code true} when it is
	 */
	static boolean onPath(String program) {
		String path = System.getenv("PATH");
		return path != null && Stream.of(path.split(File.pathSeparator))
			.anyMatch((directory) -> Files.isExecutable(Path.of(directory, program)));
	}

	/**
	 * A free local port below the range the system picks the local ports of outgoing
	 * connections from (32768 and up on Linux, 49152 and up elsewhere), so that no
	 * connection takes it before the server is up or while it is stopped; the port 10000
	 * above it, a Redis Cluster node's bus port, is free too.
	 */
	static int sparePort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(10000, 22768);
			if (free(port) && free(port + 10000)) {
				return port;
			}
		}
		throw new IllegalStateException("Found no free port between 10000 and 22767 for a server");
	}

	private static boolean free(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
