package io.github.idempotency.testservers;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.awaitility.Awaitility.await;

/**
 * A private Redis server that keeps every write across a stop (append-only, fsync always),
 * its connection factory, and an outage that a listener begins from inside the method it
 * runs: the server stops at once and starts again, on another thread, once the test's
 * condition holds (say, a completion failed), so the test decides when it ends, or once
 * a set time has passed.
 */
public final class RedisOutage implements AutoCloseable {

	private final RedisServerProcess redis = new RedisServerProcess("--appendonly", "yes", "--appendfsync", "always")
		.start();

	private final LettuceConnectionFactory connectionFactory = RedisConnections.standalone(this.redis.url());

	private final ScheduledExecutorService restarter = Executors.newSingleThreadScheduledExecutor();

	/**
	 * The connections to the server: short timeouts, commands refused while it is down.
	 * @return the started factory
	 */
	public LettuceConnectionFactory connectionFactory() {
		return this.connectionFactory;
	}

	/**
	 * Stops the server now and starts it again once {@code over} holds.
	 * @param over when the outage ends
	 */
	public void begin(BooleanSupplier over) {
		this.redis.stop();
		this.restarter.execute(() -> {
			await().atMost(Duration.ofSeconds(60)).until(over::getAsBoolean);
			this.redis.start();
		});
	}

	/**
	 * Stops the server now and starts it again {@code length} after this call began, on
	 * another thread: an outage of a set length, for a test of how long an outage may
	 * last (inherently timed).
	 * @param length how long the server is down, from this call to the start of the new
	 * server process
	 * @return completes, once the new server answers, with how long it was down: from this
	 * call until it answered (a little more than {@code length})
	 */
	public CompletableFuture<Duration> beginFor(Duration length) {
		long began = System.nanoTime();
		this.redis.stop();
		CompletableFuture<Duration> over = new CompletableFuture<>();
		this.restarter.schedule(() -> {
			try {
				this.redis.start();
				over.complete(Duration.ofNanos(System.nanoTime() - began));
			}
			catch (RuntimeException ex) {
				over.completeExceptionally(ex);
			}
		}, length.toNanos() - (System.nanoTime() - began), TimeUnit.NANOSECONDS);
		return over;
	}

	/**
	 * The server's address, for a second client of it.
	 * @return {@code redis://host:port}
	 */
	public String url() {
		return this.redis.url();
	}

	/**
	 * Stops waiting for the end of an outage still on, closes the connections and stops
	 * the server.
	 */
	@Override
	public void close() throws InterruptedException {
		this.restarter.shutdownNow();
		this.restarter.awaitTermination(30, TimeUnit.SECONDS);
		this.connectionFactory.destroy();
		this.redis.close();
	}

}
