package io.github.idempotency.testsupport;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import com.redis.testcontainers.RedisContainer;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.mariadb.MariaDBContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * Finds the servers the tests run against: the address the environment names
 * ({@code IDEMPOTENCY_TEST_*_URL}, as {@code .ci/run} exports them) or else a Testcontainers
 * container when a Docker engine answers. With neither, the test fails with a message
 * saying which to provide: it never skips.
 */
public final class TestServers {

	private static final Map<String, String> started = new ConcurrentHashMap<>();

	private TestServers() {
	}

	/**
	 * @return a PostgreSQL JDBC URL with its credentials
	 */
	public static String postgresUrl() {
		return find("IDEMPOTENCY_TEST_POSTGRES_URL", "PostgreSQL",
				"jdbc:postgresql://127.0.0.1:5432/test?user=postgres", () -> {
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
		return find("IDEMPOTENCY_TEST_MARIADB_URL", "MariaDB", "jdbc:mariadb://127.0.0.1:3306/test?user=root", () -> {
			MariaDBContainer container = new MariaDBContainer("mariadb:11");
			container.start();
			return container.getJdbcUrl() + "?user=" + container.getUsername() + "&password="
					+ container.getPassword();
		});
	}

	/**
	 * @return a Redis URL ({@code redis://host:port}) of a single node
	 */
	public static String redisUrl() {
		return find("IDEMPOTENCY_TEST_REDIS_URL", "Redis", "redis://127.0.0.1:6379", () -> {
			RedisContainer container = new RedisContainer(RedisContainer.DEFAULT_IMAGE_NAME);
			container.start();
			return container.getRedisURI();
		});
	}

	/**
	 * The nodes of a Redis Cluster. Testcontainers has no simple cluster, so there is no
	 * container fallback: the environment must name one.
	 * @return {@code host:port} of each master, comma-separated
	 */
	public static String redisClusterNodes() {
		String nodes = System.getenv("IDEMPOTENCY_TEST_REDIS_CLUSTER_NODES");
		if (nodes == null || nodes.isBlank()) {
			throw new IllegalStateException("This test needs a Redis Cluster: run eval \"$(.ci/redis-cluster.sh)\" "
					+ "(it starts three local masters) or set IDEMPOTENCY_TEST_REDIS_CLUSTER_NODES (for example "
					+ "IDEMPOTENCY_TEST_REDIS_CLUSTER_NODES='127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103'); "
					+ "there is no Testcontainers fallback for a cluster");
		}
		return nodes;
	}

	/**
	 * @return a RabbitMQ URL with its credentials ({@code amqp://user:password@host:port})
	 */
	public static String rabbitMqUrl() {
		return find("IDEMPOTENCY_TEST_RABBITMQ_URL", "RabbitMQ", "amqp://guest:guest@127.0.0.1:5672", () -> {
			RabbitMQContainer container = new RabbitMQContainer("rabbitmq:4-alpine");
			container.start();
			return "amqp://" + container.getAdminUsername() + ":" + container.getAdminPassword() + "@"
					+ container.getHost() + ":" + container.getAmqpPort();
		});
	}

	/**
	 * The address the environment gives for {@code variable}, else a started container.
	 * @param variable the environment variable
	 * @param server the server's name, for the failure message
	 * @param example an example value, for the failure message
	 * @param container starts a container and returns its address
	 * @return the address
	 */
	public static String find(String variable, String server, String example, Supplier<String> container) {
		String value = System.getenv(variable);
		if (value != null && !value.isBlank()) {
			return value;
		}
		return started.computeIfAbsent(variable, (name) -> {
			if (!dockerAvailable()) {
				throw new IllegalStateException("This test needs " + server + ": set " + variable + " (for example "
						+ variable + "='" + example + "', as .ci/run does) or start a Docker engine so "
						+ "Testcontainers can run one");
			}
			return container.get();
		});
	}

	static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

}
