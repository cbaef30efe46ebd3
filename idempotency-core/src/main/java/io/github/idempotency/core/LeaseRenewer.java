package io.github.idempotency.core;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;

/**
 * Renews the leases of running claims, each at its own interval. One daemon thread keeps
 * the time and hands each due renewal to a pool, so that a renewal blocked on the store
 * (a row lock, a slow server) never delays the others; a lease has at most one renewal
 * under way. Registering and cancelling a lease is a concurrent set operation, so a call
 * that finishes before its first renewal is due costs no scheduling at all.
 * <p>
 * The timing is what bounds the outage a run survives ({@code README}, "When the result
 * cannot be stored"): a renewal starts when it is due, not on a later tick, at most one
 * interval after the previous successful one started (so the lease that one wrote has at
 * least {@code leaseTtl - interval} left); one that fails is tried again with
 * {@link Backoff} (5 ms doubling to 500 ms) until it succeeds or the lease is cancelled,
 * so that, once the store is back, the lease is renewed within 500 ms.
 */
final class LeaseRenewer implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LeaseRenewer.class);

	private static final long MIN_INTERVAL = TimeUnit.MILLISECONDS.toNanos(5);

	/** The longest the timekeeper sleeps; a lease due earlier wakes it. */
	private static final long MAX_SLEEP = TimeUnit.SECONDS.toNanos(1);

	private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

	private final Predicate<Lease> renewal;

	private final ExecutorService renewals = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "idempotency-lease-renewal");
		thread.setDaemon(true);
		return thread;
	});

	/** When the timekeeper wakes next ({@link System#nanoTime()}); never later than it does. */
	private volatile long wakeAt = System.nanoTime();

	private volatile @Nullable Thread thread;

	private volatile boolean closed;

	/**
	 * @param renewal renews one lease in the store; {@code false} when it was lost
	 */
	LeaseRenewer(Predicate<Lease> renewal) {
		this.renewal = renewal;
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
		Lease lease = new Lease(execution, claim, nanos, System.nanoTime() + nanos);
		this.leases.add(lease);
		startIfNeeded();
		wakeBy(lease.nextRenewal);
		return lease;
	}

	void cancel(@Nullable Lease lease) {
		if (lease != null) {
			this.leases.remove(lease);
		}
	}

	/** Wakes the timekeeper when it would sleep past {@code due}. */
	private void wakeBy(long due) {
		Thread timekeeper = this.thread;
		if (timekeeper != null && due - this.wakeAt < 0) {
			LockSupport.unpark(timekeeper);
		}
	}

	private void startIfNeeded() {
		if (this.thread == null && !this.closed) {
			synchronized (this) {
				if (this.thread == null && !this.closed) {
					Thread renewer = new Thread(this::loop, "idempotency-lease-renewer");
					renewer.setDaemon(true);
					renewer.start();
					this.thread = renewer;
				}
			}
		}
	}

	private void loop() {
		while (!this.closed) {
			long now = System.nanoTime();
			long next = now + MAX_SLEEP;
			// a lease registered (or a renewal ended) while this pass runs wakes the park below
			this.wakeAt = next;
			for (Lease lease : this.leases) {
				long due = lease.nextRenewal;
				if (lease.renewing.get()) {
					continue; // the renewal under way wakes this thread when it ends
				}
				if (due - now <= 0) {
					if (lease.renewing.compareAndSet(false, true)) {
						try {
							this.renewals.execute(() -> renew(lease));
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
			this.wakeAt = next;
			LockSupport.parkNanos(next - System.nanoTime());
		}
	}

	private void renew(Lease lease) {
		long started = System.nanoTime();
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
				retries = Backoff.unbounded();
				lease.retries = retries;
				logger.warn("Could not renew the lease of " + lease.execution.id() + ": " + ex
						+ "; trying again every 500 ms at most until it is renewed or the run ends");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Could not renew the lease of " + lease.execution.id() + ": " + ex);
			}
			lease.failures++;
			lease.nextRenewal = System.nanoTime() + retries.next();
		}
		finally {
			lease.renewing.set(false);
			wakeBy(lease.nextRenewal);
		}
	}

	@Override
	public void close() {
		this.closed = true;
		this.renewals.shutdownNow();
		Thread renewer = this.thread;
		if (renewer != null) {
			LockSupport.unpark(renewer);
			try {
				renewer.join(TimeUnit.SECONDS.toMillis(5));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
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
