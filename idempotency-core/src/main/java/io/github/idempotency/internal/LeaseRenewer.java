package io.github.idempotency.internal;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;

/**
 * Renews the leases of running claims, each at its own interval. A tick on the engine's
 * scheduler ({@link EngineTime}) keeps the time and hands each due renewal to the engine's
 * pool for blocking tasks, so that a renewal blocked on the store (a row lock, a slow
 * server) never delays the others; a lease has at most one renewal under way. Registering
 * and cancelling a lease is a concurrent set operation, so a call that finishes before its
 * first renewal is due costs no scheduling at all: the tick comes at least once a second
 * while the engine runs, and earlier only for a lease due earlier.
 * <p>
 * The timing is what bounds the outage a run survives (docs/semantics.md, "When the result
 * cannot be stored"): a renewal starts when it is due, not on a later tick, at most one
 * interval after the previous successful one started (so the lease that one wrote has at
 * least {@code leaseTtl - interval} left); one that fails is tried again with
 * {@link Backoff} (5 ms doubling to 500 ms) until it succeeds or the lease is cancelled,
 * so that, once the store is back, the lease is renewed within 500 ms.
 */
final class LeaseRenewer implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LeaseRenewer.class);

	private static final long MIN_INTERVAL = TimeUnit.MILLISECONDS.toNanos(5);

	/** The longest time between two ticks; a lease due earlier brings the next one forward. */
	private static final long MAX_SLEEP = TimeUnit.SECONDS.toNanos(1);

	private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

	private final Predicate<Lease> renewal;

	private final EngineTime time;

	/** The next tick, and when it comes ({@link EngineTime#nanoTime()}); changed under the lock. */
	private volatile @Nullable Future<?> tick;

	private volatile long tickAt;

	private volatile boolean closed;

	/**
	 * @param renewal renews one lease in the store; {@code false} when it was lost
	 * @param time the engine's time and scheduler
	 */
	LeaseRenewer(Predicate<Lease> renewal, EngineTime time) {
		this.renewal = renewal;
		this.time = time;
	}

	/**
	 * Renews a claim's lease every {@code interval} from now until it is cancelled.
	 * @param execution the run
	 * @param claim its claim
	 * @param interval the time between the starts of two renewals
	 * @return the lease, to cancel
	 */
	Lease register(Execution execution, ClaimHandle claim, Duration interval) {
		long nanos = Math.max(interval.toNanos(), MIN_INTERVAL);
		Lease lease = new Lease(execution, claim, nanos, this.time.nanoTime() + nanos);
		this.leases.add(lease);
		tickBy(lease.nextRenewal);
		return lease;
	}

	void cancel(@Nullable Lease lease) {
		if (lease != null) {
			this.leases.remove(lease);
		}
	}

	/** Makes sure a tick comes by {@code due}: the pending one, or an earlier one. */
	private void tickBy(long due) {
		if (this.tick != null && due - this.tickAt >= 0) {
			return; // read without the lock: a tick by then is scheduled, and ticks only move earlier
		}
		synchronized (this) {
			if (this.closed || (this.tick != null && due - this.tickAt >= 0)) {
				return;
			}
			if (this.tick != null) {
				this.tick.cancel(false);
			}
			try {
				this.tick = this.time.schedule(this::tick, Math.max(0, due - this.time.nanoTime()));
				this.tickAt = due;
			}
			catch (RejectedExecutionException ex) {
				this.tick = null; // closed
			}
		}
	}

	private void tick() {
		long now = this.time.nanoTime();
		long next = now + MAX_SLEEP;
		synchronized (this) {
			this.tick = null;
		}
		for (Lease lease : this.leases) {
			long due = lease.nextRenewal;
			if (lease.renewing.get()) {
				continue; // the renewal under way asks for a tick when it ends
			}
			if (due - now <= 0) {
				if (lease.renewing.compareAndSet(false, true)) {
					try {
						this.time.execute(() -> renew(lease));
					}
					catch (RejectedExecutionException ex) {
						lease.renewing.set(false); // closed
					}
				}
			}
			else if (due - next < 0) {
				next = due;
			}
		}
		tickBy(next);
	}

	private void renew(Lease lease) {
		long started = this.time.nanoTime();
		try {
			if (this.renewal.test(lease)) {
				if (lease.retries != null) {
					logger.info("Renewed the lease of " + lease.execution.id() + " again after " + lease.failures
							+ " failed attempt(s)");
					lease.retries = null;
					lease.failures = 0;
				}
				lease.nextRenewal = started + lease.interval;
			}
			else {
				this.leases.remove(lease);
			}
		}
		catch (RuntimeException ex) {
			// the store is unreachable: try again soon, the lease may still hold
			Backoff retries = lease.retries;
			if (retries == null) {
				retries = Backoff.unbounded(this.time);
				lease.retries = retries;
				logger.warn("Could not renew the lease of " + lease.execution.id() + ": " + ex
						+ "; trying again every 500 ms at most until it is renewed or the run ends");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Could not renew the lease of " + lease.execution.id() + ": " + ex);
			}
			lease.failures++;
			lease.nextRenewal = this.time.nanoTime() + retries.next();
		}
		finally {
			lease.renewing.set(false);
			tickBy(lease.nextRenewal);
		}
	}

	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
			if (this.tick != null) {
				this.tick.cancel(false);
				this.tick = null;
			}
		}
	}

	static final class Lease {

		final Execution execution;

		final ClaimHandle claim;

		final long interval;

		volatile long nextRenewal;

		final AtomicBoolean renewing = new AtomicBoolean();

		/** The pauses between failed renewals; {@code null} while they succeed. Kept by the one renewal under way. */
		@Nullable Backoff retries;

		/** The failed renewals in a row. Kept by the one renewal under way. */
		int failures;

		Lease(Execution execution, ClaimHandle claim, long interval, long nextRenewal) {
			this.execution = execution;
			this.claim = claim;
			this.interval = interval;
			this.nextRenewal = nextRenewal;
		}

	}

}
