package io.github.idempotency.store;

import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.observe.IdempotencyObserver;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.Assert;

/**
 * Removes a store's expired records every {@code interval}, from one daemon thread that
 * starts and stops with the application context: the jdbc store's batched delete, the
 * memory store's purge. Several instances may run it at once on a shared store: each
 * pass removes what it finds expired. Each run is reported to an {@link IdempotencyObserver}
 * (the records removed, the time taken) and, when it removed records, in one INFO line; a
 * run that took longer than the interval, which means the records expire about as fast as
 * the cleanup removes them or faster, in a WARN line.
 */
public final class ExpiredRecordsCleaner implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ExpiredRecordsCleaner.class);

	private final String backend;

	private final IntSupplier removeExpired;

	private final Duration interval;

	private final IdempotencyObserver observer;

	private final Clock clock;

	private volatile @Nullable ScheduledExecutorService executor;

	/**
	 * A cleaner started with the application context.
	 * @param backend the store's backend name, for the thread and the log lines
	 * @param removeExpired removes the expired records, answering how many
	 * @param interval the time between two passes; positive
	 */
	public ExpiredRecordsCleaner(String backend, IntSupplier removeExpired, Duration interval) {
		this(backend, removeExpired, interval, IdempotencyObserver.NONE);
	}

	/**
	 * A cleaner started with the application context, whose runs an observer hears of.
	 * @param backend the store's backend name, for the thread, the log lines and the observer
	 * @param removeExpired removes the expired records, answering how many
	 * @param interval the time between two passes; positive
	 * @param observer told of each run ({@link IdempotencyObserver#onCleanup})
	 */
	public ExpiredRecordsCleaner(String backend, IntSupplier removeExpired, Duration interval,
			IdempotencyObserver observer) {
		this(backend, removeExpired, interval, observer, Clock.systemUTC());
	}

	/**
	 * A cleaner started with the application context, whose runs an observer hears of and
	 * are timed on {@code clock}.
	 * @param backend the store's backend name, for the thread, the log lines and the observer
	 * @param removeExpired removes the expired records, answering how many
	 * @param interval the time between two passes; positive
	 * @param observer told of each run ({@link IdempotencyObserver#onCleanup})
	 * @param clock what the runs are timed on (the store's clock)
	 */
	public ExpiredRecordsCleaner(String backend, IntSupplier removeExpired, Duration interval,
			IdempotencyObserver observer, Clock clock) {
		Assert.notNull(observer, "'observer' must not be null");
		Assert.notNull(clock, "'clock' must not be null");
		Assert.isTrue(!interval.isZero() && !interval.isNegative(),
				() -> "The cleanup interval must be positive, not " + interval);
		this.backend = backend;
		this.removeExpired = removeExpired;
		this.interval = interval;
		this.observer = observer;
		this.clock = clock;
	}

	/**
	 * Removes the expired records now.
	 * @return how many were removed
	 */
	public int cleanUp() {
		long start = this.clock.millis();
		int removed = this.removeExpired.getAsInt();
		long nanos = Math.max(0, this.clock.millis() - start) * 1_000_000;
		try {
			this.observer.onCleanup(this.backend, removed, nanos);
		}
		catch (RuntimeException ex) {
			logger.warn("The idempotency observer failed on a cleanup run; ignored", ex);
		}
		double seconds = nanos / 1e9;
		if (nanos > this.interval.toNanos()) {
			logger.warn(String.format(Locale.ROOT,
					"The %s store's cleanup removed %d expired idempotency records in %.3f s (%.0f records/s), longer "
							+ "than its interval of %s: records expire about as fast as it removes them, or faster, "
							+ "and pile up while it does; let it delete faster (its batch size, and on jdbc and r2dbc "
							+ "its duty-cycle and max-rows-per-second properties) or keep records for less time",
					this.backend, removed, seconds, removed / Math.max(seconds, 1e-9), this.interval));
		}
		else if (removed > 0 && logger.isInfoEnabled()) {
			logger.info(String.format(Locale.ROOT,
					"Removed %d expired idempotency records from the %s store in %.3f s (%.0f records/s)", removed,
					this.backend, seconds, removed / Math.max(seconds, 1e-9)));
		}
		return removed;
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
			Thread thread = new Thread(task, "idempotency-" + this.backend + "-cleanup");
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
			logger.warn("Could not remove the expired idempotency records of the " + this.backend
					+ " store; trying again in " + this.interval, ex);
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
