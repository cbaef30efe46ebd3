package io.github.idempotency.core;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;

/**
 * Renews the leases of running claims every {@code leaseTtl / 3}. One daemon thread keeps
 * the time and hands each due renewal to a pool, so that a renewal blocked on the store
 * (a row lock, a slow server) never delays the others; a lease has at most one renewal
 * under way. Registering and cancelling a lease is a concurrent set operation, so a call
 * that finishes before its first renewal is due costs no scheduling at all.
 */
final class LeaseRenewer implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LeaseRenewer.class);

	private static final long MIN_TICK = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_TICK = TimeUnit.SECONDS.toNanos(1);

	private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

	private final Predicate<Lease> renewal;

	private final ExecutorService renewals = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "idempotency-lease-renewal");
		thread.setDaemon(true);
		return thread;
	});

	private volatile long tickNanos = MAX_TICK;

	private volatile @Nullable Thread thread;

	private volatile boolean closed;

	/**
	 * @param renewal renews one lease in the store; {@code false} when it was lost
	 */
	LeaseRenewer(Predicate<Lease> renewal) {
		this.renewal = renewal;
	}

	Lease register(Execution execution, ClaimHandle claim, Duration leaseTtl) {
		long interval = Math.max(leaseTtl.toNanos() / 3, MIN_TICK);
		Lease lease = new Lease(execution, claim, interval, System.nanoTime() + interval);
		long tick = Math.max(MIN_TICK, Math.min(interval / 4, MAX_TICK));
		if (tick < this.tickNanos) {
			this.tickNanos = tick;
		}
		this.leases.add(lease);
		startIfNeeded();
		return lease;
	}

	void cancel(@Nullable Lease lease) {
		if (lease != null) {
			this.leases.remove(lease);
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
			LockSupport.parkNanos(this.tickNanos);
			long now = System.nanoTime();
			for (Lease lease : this.leases) {
				if (now - lease.nextRenewal >= 0 && lease.renewing.compareAndSet(false, true)) {
					this.renewals.execute(() -> renew(lease, now));
				}
			}
		}
	}

	private void renew(Lease lease, long now) {
		try {
			if (this.renewal.test(lease)) {
				lease.nextRenewal = now + lease.interval;
			}
			else {
				this.leases.remove(lease);
			}
		}
		catch (RuntimeException ex) {
			// the store is unreachable: try again on the next tick, the lease may still hold
			logger.warn("Could not renew the lease of " + lease.execution.id() + ": " + ex);
		}
		finally {
			lease.renewing.set(false);
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

		Lease(Execution execution, ClaimHandle claim, long interval, long nextRenewal) {
			this.execution = execution;
			this.claim = claim;
			this.interval = interval;
			this.nextRenewal = nextRenewal;
		}

	}

}
