package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Deletes expired records of a {@link JdbcIdempotencyStore} every {@code interval}, in
 * batches, from one daemon thread that starts and stops with the application context.
 * Several instances may run it at once: each statement deletes what it finds expired.
 */
public final class JdbcExpiredRecordsCleaner implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(JdbcExpiredRecordsCleaner.class);

	private final JdbcIdempotencyStore store;

	private final Duration interval;

	private final int batchSize;

	private volatile @Nullable ScheduledExecutorService executor;

	public JdbcExpiredRecordsCleaner(JdbcIdempotencyStore store, Duration interval, int batchSize) {
		this.store = store;
		this.interval = interval;
		this.batchSize = batchSize;
	}

	/**
	 * Deletes the expired records now.
	 * @return how many were deleted
	 */
	public int cleanUp() {
		int deleted = this.store.deleteExpired(this.batchSize);
		if (deleted > 0) {
			logger.info("Deleted " + deleted + " expired idempotency records");
		}
		return deleted;
	}

	@Override
	public void start() {
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "idempotency-jdbc-cleanup");
			thread.setDaemon(true);
			return thread;
		});
		long millis = this.interval.toMillis();
		scheduler.scheduleWithFixedDelay(this::cleanUpQuietly, millis, millis, TimeUnit.MILLISECONDS);
		this.executor = scheduler;
	}

	private void cleanUpQuietly() {
		try {
			cleanUp();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not delete expired idempotency records; trying again in " + this.interval, ex);
		}
	}

	@Override
	public void stop() {
		ScheduledExecutorService scheduler = this.executor;
		if (scheduler != null) {
			scheduler.shutdownNow();
			this.executor = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.executor != null;
	}

}
