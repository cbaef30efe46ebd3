package io.github.idempotency.testservers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

import static org.awaitility.Awaitility.await;

/**
 * A private PostgreSQL server on a spare local port, which a test stops (as a crash:
 * {@code pg_ctl stop -m immediate}, committed transactions survive in its write-ahead log)
 * and starts again to play an outage. It runs {@code initdb} and {@code pg_ctl} from the
 * {@code PATH} (as the {@code postgres} user when the tests run as root, which PostgreSQL
 * refuses); without them, the same server in a container on the host's network when a
 * Docker engine answers; with neither, it fails and says what to install. Whatever it
 * started is stopped, and its directory deleted, by {@link #close()} or at the latest when
 * the test JVM ends.
 */
public final class PostgresServerProcess implements AutoCloseable {

	private static final DockerImageName IMAGE = DockerImageName.parse("postgres:16-alpine");

	/** Every server not closed yet: the shutdown hook closes them. */
	private static final Set<PostgresServerProcess> open = ConcurrentHashMap.newKeySet();

	/** Whether {@code pg_ctl} and {@code initdb} are on the {@code PATH}; else it runs in containers. */
	private static final boolean fromPath = TestServers.onPath("pg_ctl") && TestServers.onPath("initdb");

	/** PostgreSQL refuses to run as root: as root, it runs as the {@code postgres} user. */
	private static final List<String> asServerUser = "root".equals(System.getProperty("user.name"))
			? List.of("runuser", "-u", "postgres", "--") : List.of();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> List.copyOf(open).forEach((server) -> {
			try {
				server.close();
			}
			catch (RuntimeException ex) {
				System.err.println("Could not stop the PostgreSQL server on port " + server.port + ": " + ex);
			}
		}), "postgres-server-cleanup"));
	}

	private final int port;

	private final Path directory;

	private final Path data;

	private boolean initialized;

	private boolean closed;

	private @Nullable GenericContainer<?> container;

	public PostgresServerProcess() {
		if (!fromPath && !TestServers.dockerAvailable()) {
			throw new IllegalStateException("This test starts its own PostgreSQL server on a spare port: install "
					+ "PostgreSQL's server (initdb and pg_ctl are run from the PATH) or start a Docker engine (a "
					+ "postgres container is run on the host's network); neither is there");
		}
		this.port = TestServers.sparePort();
		try {
			this.directory = Files.createTempDirectory("idempotency-postgres-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.data = this.directory.resolve("data");
		open.add(this);
	}

	public int port() {
		return this.port;
	}

	/**
	 * The JDBC URL of the server's {@code postgres} database (user {@code postgres}, trust
	 * authentication).
	 * @return the URL
	 */
	public String url() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/postgres?user=postgres";
	}

	/**
	 * Starts the server (creating its cluster the first time) and waits until it answers.
	 * @return this server
	 */
	public PostgresServerProcess start() {
		try {
			launch();
			await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(this::answers);
			return this;
		}
		catch (RuntimeException ex) {
			String log = log();
			close();
			throw new IllegalStateException("The PostgreSQL server on port " + this.port + " did not come up" + log, ex);
		}
	}

	private void launch() {
		if (fromPath) {
			if (!this.initialized) {
				if (!asServerUser.isEmpty()) {
					run(List.of("chown", "postgres", this.directory.toString()));
				}
				run(command("initdb", "-D", this.data.toString(), "-A", "trust", "-U", "postgres", "-E", "UTF8",
						"--no-locale", "--no-sync"));
				// in its configuration rather than on pg_ctl's command line, which a shell splits
				try {
					Files.writeString(this.data.resolve("postgresql.conf"), "\nport = " + this.port
							+ "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n",
							StandardOpenOption.APPEND);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
				this.initialized = true;
			}
			run(command("pg_ctl", "-D", this.data.toString(), "-l", this.directory.resolve("postgres.log").toString(),
					"-w", "start"));
		}
		else {
			// the image's entrypoint creates the cluster in the bound directory the first time
			this.directory.toFile().setWritable(true, false);
			this.container = new GenericContainer<>(IMAGE).withNetworkMode("host")
				.withEnv(Map.of("POSTGRES_HOST_AUTH_METHOD", "trust", "PGDATA", this.data.toString()))
				.withFileSystemBind(this.directory.toString(), this.directory.toString(), BindMode.READ_WRITE)
				.withCommand("postgres", "-p", String.valueOf(this.port), "-c", "listen_addresses=127.0.0.1");
			this.container.start();
		}
	}

	/**
	 * Stops the server as a crash would (no checkpoint, every connection cut) and waits
	 * until it is gone.
	 */
	public void stop() {
		if (this.container != null) {
			this.container.getDockerClient().killContainerCmd(this.container.getContainerId()).exec();
			this.container.stop();
			this.container = null;
		}
		else {
			run(command("pg_ctl", "-D", this.data.toString(), "-m", "immediate", "-w", "stop"));
		}
		await().atMost(10, TimeUnit.SECONDS).until(() -> !answers());
	}

	/**
	 * Stops the server at once and deletes its directory; the JVM's end does it too.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		try {
			if (this.container != null) {
				this.container.stop();
				this.container = null;
			}
			else if (this.initialized && Files.exists(this.data.resolve("postmaster.pid"))) {
				run(command("pg_ctl", "-D", this.data.toString(), "-m", "immediate", "-w", "stop"));
			}
		}
		finally {
			open.remove(this);
			delete();
		}
	}

	/** Deletes the directory, as far as this JVM may (a container's files may be another user's). */
	private void delete() {
		try (Stream<Path> files = Files.walk(this.directory)) {
			files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
		}
		catch (IOException | UncheckedIOException ex) {
			System.err.println("Could not delete " + this.directory + ": " + ex);
		}
	}

	private boolean answers() {
		try (Connection connection = DriverManager.getConnection(url())) {
			return connection.isValid(1);
		}
		catch (SQLException ex) {
			return false;
		}
	}

	private static List<String> command(String... command) {
		List<String> full = new ArrayList<>(asServerUser);
		full.addAll(List.of(command));
		return full;
	}

	/** Runs {@code command} to its end, within a minute; fails with its output unless it succeeded. */
	private void run(List<String> command) {
		try {
			Path output = Files.createTempFile("idempotency-postgres-command-", ".log");
			try {
				// in the server's directory: the postgres user may not enter the JVM's own
				Process process = new ProcessBuilder(command).directory(this.directory.toFile())
					.redirectErrorStream(true)
					.redirectOutput(output.toFile())
					.start();
				boolean ended = process.waitFor(60, TimeUnit.SECONDS);
				if (!ended) {
					process.destroyForcibly();
				}
				if (!ended || process.exitValue() != 0) {
					throw new IllegalStateException(String.join(" ", command) + " failed: " + Files.readString(output));
				}
			}
			finally {
				Files.deleteIfExists(output);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private String log() {
		try {
			Path log = this.directory.resolve("postgres.log");
			return Files.exists(log) ? ":\n" + Files.readString(log) : "";
		}
		catch (IOException | UncheckedIOException ex) {
			return ": " + ex;
		}
	}

}
