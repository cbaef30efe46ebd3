package io.github.idempotency.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A private {@code redis-server} on a spare local port, which a test stops and starts to
 * play an outage. Needs {@code redis-server} on the {@code PATH}.
 */
public final class RedisServerProcess implements AutoCloseable {

	private final int port;

	private final File directory;

	private final List<String> options;

	private Process process;

	/**
	 * A server with {@code options} added to its command line.
	 * @param options such as {@code "--replicaof", "127.0.0.1", "6380"}
	 */
	public RedisServerProcess(String... options) {
		this.options = List.of(options);
		this.port = sparePort();
		try {
			this.directory = Files.createTempDirectory("idempotency-redis-").toFile();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	public int port() {
		return this.port;
	}

	public String url() {
		return "redis://127.0.0.1:" + this.port;
	}

	/**
	 * Starts the server and waits until it accepts connections.
	 * @return this server
	 */
	public RedisServerProcess start() {
		try {
			List<String> command = new ArrayList<>(List.of("redis-server", "--port", String.valueOf(this.port), "--bind",
					"127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.directory.getPath()));
			command.addAll(this.options);
			this.process = new ProcessBuilder(command)
				.redirectErrorStream(true)
				.redirectOutput(new File(this.directory, "redis.log"))
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("This test starts its own redis-server: put redis-server on the PATH", ex);
		}
		await().atMost(10, TimeUnit.SECONDS).until(this::accepts);
		return this;
	}

	/**
	 * Stops the server and waits until it is gone.
	 */
	public void stop() {
		if (this.process != null) {
			this.process.destroy();
			await().atMost(10, TimeUnit.SECONDS).until(() -> !this.process.isAlive() && !accepts());
		}
	}

	@Override
	public void close() {
		if (this.process != null) {
			this.process.destroyForcibly();
		}
	}

	private boolean accepts() {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static int sparePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
