package io.github.idempotency.testservers;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

import static org.awaitility.Awaitility.await;

/**
 * A private Redis server on a spare local port, which a test stops and starts to play an
 * outage, or one of the masters of a {@link #startCluster() cluster}. It runs
 * {@code redis-server} from the {@code PATH} as a child process; without one, the same
 * command line in a container on the host's network when a Docker engine answers (so that
 * replicas and cluster nodes reach each other on 127.0.0.1 as processes do; Docker Desktop
 * needs host networking turned on); with neither, it fails and says what to install. Whatever it started is stopped, and its
 * temporary directory deleted, by {@link #close()} or at the latest when the test JVM ends.
 */
public final class RedisServerProcess implements AutoCloseable {

	private static final DockerImageName IMAGE = DockerImageName.parse("redis:7-alpine");

	private static final int CLUSTER_SLOTS = 16384;

	/** Every server not closed yet: the shutdown hook closes them. */
	private static final Set<RedisServerProcess> open = ConcurrentHashMap.newKeySet();

	/** Whether {@code redis-server} is on the {@code PATH}; else it runs in containers. */
	private static final boolean fromPath = TestServers.onPath("redis-server");

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> List.copyOf(open).forEach((server) -> {
			try {
				server.close();
			}
			catch (RuntimeException ex) {
				System.err.println("Could not stop redis-server on port " + server.port + ": " + ex);
			}
		}), "redis-server-cleanup"));
	}

	private final int port;

	private final Path directory;

	private final List<String> options;

	private @Nullable Process process;

	private @Nullable GenericContainer<?> container;

	/**
	 * A server with {@code options} added to its command line.
	 * @param options such as {@code "--replicaof", "127.0.0.1", "6380"}
	 */
	public RedisServerProcess(String... options) {
		if (!fromPath && !TestServers.dockerAvailable()) {
			throw new IllegalStateException("This test starts its own redis-server on a spare port: install "
					+ "redis-server (it is run from the PATH) or start a Docker engine (a redis container is "
					+ "run on the host's network); neither is there");
		}
		this.options = List.of(options);
		this.port = TestServers.sparePort();
		try {
			this.directory = Files.createTempDirectory("idempotency-redis-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		open.add(this);
	}

	/**
	 * Starts three cluster-enabled masters on spare ports, gives each a third of the slots,
	 * introduces them to each other and waits until each one reports
	 * {@code cluster_state:ok}. They stop when the test JVM ends.
	 * @return {@code host:port} of each master, comma-separated
	 */
	public static String startCluster() {
		return nodes(startClusterMasters());
	}

	/**
	 * The {@code host:port} of servers, comma-separated.
	 * @param servers the servers
	 * @return their addresses
	 */
	public static String nodes(List<RedisServerProcess> servers) {
		return servers.stream().map((server) -> "127.0.0.1:" + server.port).collect(Collectors.joining(","));
	}

	/**
	 * Starts a cluster as {@link #startCluster()} does, for a test that stops and starts
	 * its masters: a master started again rejoins with its slots (its cluster configuration
	 * file is kept in its directory), without the data it held.
	 * @return the masters, in the order of their slots
	 */
	public static List<RedisServerProcess> startClusterMasters() {
		// a master that joins reports ok only after the node timeout: keep it short
		List<RedisServerProcess> masters = Stream
			.generate(() -> new RedisServerProcess("--cluster-enabled", "yes", "--cluster-node-timeout", "2000"))
			.limit(3)
			.toList();
		masters.forEach(RedisServerProcess::start);
		RedisClient client = RedisClient.create();
		List<StatefulRedisConnection<String, String>> connections = masters.stream()
			.map((master) -> client.connect(RedisURI.create("127.0.0.1", master.port)))
			.toList();
		try {
			List<RedisCommands<String, String>> nodes = connections.stream()
				.map(StatefulRedisConnection::sync)
				.toList();
			for (int i = 0; i < nodes.size(); i++) {
				nodes.get(i)
					.clusterAddSlots(IntStream.range(i * CLUSTER_SLOTS / nodes.size(),
							(i + 1) * CLUSTER_SLOTS / nodes.size())
						.toArray());
				nodes.get(i).clusterSetConfigEpoch(i + 1); // distinct, as redis-cli --cluster create sets them
			}
			for (int i = 0; i < nodes.size(); i++) {
				for (int j = i + 1; j < nodes.size(); j++) {
					nodes.get(i).clusterMeet("127.0.0.1", masters.get(j).port);
				}
			}
			await("cluster_state:ok on every master").atMost(30, TimeUnit.SECONDS)
				.pollInterval(Duration.ofMillis(50))
				.until(() -> nodes.stream().allMatch((node) -> node.clusterInfo().contains("cluster_state:ok")));
		}
		finally {
			connections.forEach(StatefulRedisConnection::close);
			client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		}
		return masters;
	}

	public int port() {
		return this.port;
	}

	public String url() {
		return "redis://127.0.0.1:" + this.port;
	}

	/**
	 * Starts the server and waits until it answers a {@code PING}.
	 * @return this server
	 */
	public RedisServerProcess start() {
		List<String> command = new ArrayList<>(List.of("redis-server", "--port", String.valueOf(this.port), "--bind",
				"127.0.0.1", "--save", "", "--appendonly", "no"));
		command.addAll(this.options);
		// its files (a cluster's configuration, an append-only file) outlive a stop
		command.addAll(List.of("--dir", this.directory.toString()));
		if (fromPath) {
			try {
				this.process = new ProcessBuilder(command).redirectErrorStream(true)
					.redirectOutput(this.directory.resolve("redis.log").toFile())
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		else {
			// the image's redis user writes in the directory, bound at the same path
			this.directory.toFile().setWritable(true, false);
			this.container = new GenericContainer<>(IMAGE).withNetworkMode("host")
				.withFileSystemBind(this.directory.toString(), this.directory.toString(), BindMode.READ_WRITE)
				.withCommand(command.toArray(String[]::new));
			this.container.start();
		}
		try {
			await().atMost(10, TimeUnit.SECONDS)
				.pollInterval(Duration.ofMillis(20))
				.failFast(() -> !running())
				.until(() -> pings(this.port));
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("redis-server on port " + this.port + " did not come up: " + log(), ex);
		}
		return this;
	}

	/**
	 * Stops the server and waits until it is gone.
	 */
	public void stop() {
		if (this.process != null) {
			this.process.destroy();
		}
		if (this.container != null) {
			this.container.stop();
			this.container = null;
		}
		await().atMost(10, TimeUnit.SECONDS).until(() -> !running() && !accepts());
	}

	/**
	 * Stops the server at once and deletes its directory; the JVM's end does it too.
	 */
	@Override
	public void close() {
		try {
			if (this.process != null) {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
			if (this.container != null) {
				this.container.stop();
				this.container = null;
			}
			try (Stream<Path> files = Files.walk(this.directory)) {
				files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			open.remove(this);
		}
	}

	/**
	 * Sends {@code PING} and expects {@code PONG}, so that a port another program holds
	 * does not count as Redis.
	 * @param host the host
	 * @param port the port
	 * @throws IOException when it cannot connect within a second or the answer is not {@code PONG}
	 */
	static void ping(String host, int port) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), 1000);
			socket.setSoTimeout(2000);
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			InputStream in = socket.getInputStream();
			StringBuilder answer = new StringBuilder();
			for (int c = in.read(); c != -1 && c != '\r' && answer.length() < 200; c = in.read()) {
				answer.append((char) c);
			}
			if (!answer.toString().equals("+PONG")) {
				throw new IOException("answers PING with '" + answer + "', not +PONG");
			}
		}
	}

	private static boolean pings(int port) {
		try {
			ping("127.0.0.1", port);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private String log() {
		if (this.container != null) {
			return this.container.getLogs();
		}
		try {
			return Files.readString(this.directory.resolve("redis.log"));
		}
		catch (IOException ex) {
			return ex.toString();
		}
	}

	private boolean running() {
		return (this.process != null && this.process.isAlive())
				|| (this.container != null && this.container.isRunning());
	}

	private boolean accepts() {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
