package io.github.idempotency.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import org.springframework.context.SmartLifecycle;

/**
 * Drops the expired records of a {@link MemoryIdempotencyStore} every {@code interval},
 * from one daemon thread that starts and stops with the application context, so that the
 * store holds only the records within their retention instead of every key it has seen.
 */
public final class MemoryExpiredRecordsCleaner implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(MemoryExpiredRecordsCleaner.class);

	private final IntSupplier purge;

	private final Duration interval;

	private volatile @Nullable ScheduledExecutorService executor;

	/**
	 * A cleaner of {@code store}, started with the application context.
	 * @param store the store to clean up
	 * @param interval the time between two cleanups; positive
	 */
	public MemoryExpiredRecordsCleaner(MemoryIdempotencyStore store, Duration interval) {
		this(store::purgeExpired, interval);
	}

	MemoryExpiredRecordsCleaner(IntSupplier purge, Duration interval) {
		if (interval.isZero() || interval.isNegative()) {
			throw new IllegalArgumentException("The cleanup interval must be positive, not " + interval);
		}
		this.purge = purge;
		this.interval = interval;
	}

	/**
	 * Drops the expired records now.
	 * @return how many were dropped
	 */
	public int cleanUp() {
		int dropped = this.purge.getAsInt();
		if (dropped > 0 && logger.isDebugEnabled()) {
			logger.debug("Dropped " + dropped + " expired idempotency records from memory");
		}
		return dropped;
	}

	/**
	 * How often the records are cleaned up.
	 * @return the interval
	 */
	public Duration getInterval() {
		return this.interval;
	}

	@Override
	public void start() {
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "idempotency-memory-cleanup");
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
			logger.warn("Could not drop expired idempotency records; trying again in " + this.interval, ex);
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
