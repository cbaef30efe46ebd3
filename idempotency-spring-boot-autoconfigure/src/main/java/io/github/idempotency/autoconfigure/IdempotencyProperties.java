package io.github.idempotency.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.StoreUnavailablePolicy;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.core.Ordered;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Configuration of the idempotency starter.
 */
@ConfigurationProperties("idempotency")
public class IdempotencyProperties {

	/**
	 * Default order of the @Idempotent advisor: the lowest precedence, like the
	 * {@code @Transactional} advisor's, after which it is registered, so that it runs
	 * inside the method's transaction.
	 */
	public static final int DEFAULT_ASPECT_ORDER = Ordered.LOWEST_PRECEDENCE;

	/**
	 * Whether @Idempotent methods and the IdempotencyTemplate are protected.
	 */
	private boolean enabled = true;

	/**
	 * The store. When unset: jdbc if a DataSource exists, else redis if a Redis
	 * connection factory exists, else memory.
	 */
	private @Nullable IdempotencyBackend backend;

	/**
	 * How long a claim is held without renewal. A crashed run is taken over within this
	 * time; a result (or a permanent failure) the store fails to take is retried for up to
	 * this time, outside a transaction. A store outage shorter than lease-ttl -
	 * lease-renewal-interval - 500 ms never runs an operation twice.
	 */
	@DurationUnit(ChronoUnit.SECONDS)
	private Duration leaseTtl = Duration.ofSeconds(30);

	/**
	 * Whether the lease of a running method is renewed every lease-renewal-interval, so a
	 * slow method is never taken over while its process is alive.
	 */
	private boolean leaseRenewal = true;

	/**
	 * The time between two renewals of a running method's lease; lease-ttl / 3 when unset.
	 * Positive and shorter than lease-ttl. A store outage shorter than lease-ttl -
	 * lease-renewal-interval - 500 ms never runs an operation twice: a shorter interval
	 * survives a longer outage, for a renewal more often. A method with a lease of its own
	 * is renewed at the same fraction of it.
	 */
	@DurationUnit(ChronoUnit.SECONDS)
	private @Nullable Duration leaseRenewalInterval;

	/**
	 * How long a finished (completed or failed) record is kept.
	 */
	@DurationUnit(ChronoUnit.DAYS)
	private Duration retention = Duration.ofDays(7);

	/**
	 * What a call does when the same key runs elsewhere: wait (poll until it finishes, up
	 * to wait-timeout) or reject (throw IdempotencyInProgressException at once).
	 */
	private InProgressPolicy onInProgress = InProgressPolicy.WAIT;

	/**
	 * How long a call waits for another run of its key before throwing
	 * IdempotencyInProgressException.
	 */
	@DurationUnit(ChronoUnit.SECONDS)
	private Duration waitTimeout = Duration.ofSeconds(45);

	/**
	 * What a call does when the store cannot be reached: fail-closed (throw
	 * IdempotencyStoreException, do not run) or fail-open (run unprotected, log a WARN). A
	 * call the store refuses (such as a jdbc claim in a read-only transaction) fails
	 * either way.
	 */
	private StoreUnavailablePolicy storeUnavailable = StoreUnavailablePolicy.FAIL_CLOSED;

	/**
	 * The longest key accepted, in characters.
	 */
	private int maxKeyLength = 255;

	/**
	 * Order of the @Idempotent advisor among the other advisors of a bean. It must run
	 * inside the @Transactional advisor (a lower precedence, or the same order): the
	 * start fails otherwise.
	 */
	private int aspectOrder = DEFAULT_ASPECT_ORDER;

	private final Observation observation = new Observation();

	private final ListenerBackOff listenerBackOff = new ListenerBackOff();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable IdempotencyBackend getBackend() {
		return this.backend;
	}

	public void setBackend(@Nullable IdempotencyBackend backend) {
		this.backend = backend;
	}

	public Duration getLeaseTtl() {
		return this.leaseTtl;
	}

	public void setLeaseTtl(Duration leaseTtl) {
		this.leaseTtl = leaseTtl;
	}

	public boolean isLeaseRenewal() {
		return this.leaseRenewal;
	}

	public void setLeaseRenewal(boolean leaseRenewal) {
		this.leaseRenewal = leaseRenewal;
	}

	public @Nullable Duration getLeaseRenewalInterval() {
		return this.leaseRenewalInterval;
	}

	public void setLeaseRenewalInterval(@Nullable Duration leaseRenewalInterval) {
		this.leaseRenewalInterval = leaseRenewalInterval;
	}

	public Duration getRetention() {
		return this.retention;
	}

	public void setRetention(Duration retention) {
		this.retention = retention;
	}

	public InProgressPolicy getOnInProgress() {
		return this.onInProgress;
	}

	public void setOnInProgress(InProgressPolicy onInProgress) {
		this.onInProgress = onInProgress;
	}

	public Duration getWaitTimeout() {
		return this.waitTimeout;
	}

	public void setWaitTimeout(Duration waitTimeout) {
		this.waitTimeout = waitTimeout;
	}

	public StoreUnavailablePolicy getStoreUnavailable() {
		return this.storeUnavailable;
	}

	public void setStoreUnavailable(StoreUnavailablePolicy storeUnavailable) {
		this.storeUnavailable = storeUnavailable;
	}

	public int getMaxKeyLength() {
		return this.maxKeyLength;
	}

	public void setMaxKeyLength(int maxKeyLength) {
		this.maxKeyLength = maxKeyLength;
	}

	public int getAspectOrder() {
		return this.aspectOrder;
	}

	public void setAspectOrder(int aspectOrder) {
		this.aspectOrder = aspectOrder;
	}

	public Observation getObservation() {
		return this.observation;
	}

	public ListenerBackOff getListenerBackOff() {
		return this.listenerBackOff;
	}

	/**
	 * The engine's settings from these properties.
	 * @return the settings
	 * @throws IllegalArgumentException when a value is out of range
	 */
	EngineSettings toEngineSettings() {
		if (this.onInProgress == InProgressPolicy.DEFAULT) {
			throw new IllegalArgumentException("idempotency.on-in-progress must be 'wait' or 'reject'");
		}
		if (this.leaseTtl.isNegative() || this.leaseTtl.isZero()) {
			throw new IllegalArgumentException("idempotency.lease-ttl must be positive, not " + this.leaseTtl);
		}
		Duration interval = this.leaseRenewalInterval;
		if (interval != null && (interval.isNegative() || interval.isZero() || interval.compareTo(this.leaseTtl) >= 0)) {
			throw new IllegalArgumentException("idempotency.lease-renewal-interval must be positive and shorter than "
					+ "idempotency.lease-ttl: it is " + interval + ", the lease " + this.leaseTtl
					+ " (unset, it is lease-ttl / 3)");
		}
		return EngineSettings.builder()
			.leaseTtl(this.leaseTtl)
			.leaseRenewal(this.leaseRenewal)
			.leaseRenewalInterval(interval)
			.retention(this.retention)
			.onInProgress(this.onInProgress)
			.waitTimeout(this.waitTimeout)
			.storeUnavailable(this.storeUnavailable)
			.maxKeyLength(this.maxKeyLength)
			.build();
	}

	/**
	 * The Micrometer observations of idempotent calls.
	 */
	public static class Observation {

		/**
		 * Whether the idempotency key is a high-cardinality key value of the
		 * idempotency.execution observations (in traces; never a metric tag).
		 */
		private boolean includeKey;

		public boolean isIncludeKey() {
			return this.includeKey;
		}

		public void setIncludeKey(boolean includeKey) {
			this.includeKey = includeKey;
		}

	}

	/**
	 * The back-pressure of Kafka and RabbitMQ listeners on a store outage: a delivery whose
	 * claim failed because the store could not be reached (fail-closed) or its key was
	 * still in progress after the wait comes back after a pause that grows while claims keep
	 * failing (per consumer), never given up on.
	 */
	public static class ListenerBackOff {

		/**
		 * The pause before the first redelivery of a delivery whose claim failed.
		 */
		private Duration initialInterval = Duration.ofMillis(100);

		/**
		 * How much longer each next pause is, while claims keep failing.
		 */
		private double multiplier = 2.0;

		/**
		 * The longest pause: about one redelivery per interval per consumer during an
		 * outage, and the store's return noticed within it.
		 */
		private Duration maxInterval = Duration.ofSeconds(1);

		public Duration getInitialInterval() {
			return this.initialInterval;
		}

		public void setInitialInterval(Duration initialInterval) {
			this.initialInterval = initialInterval;
		}

		public double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(double multiplier) {
			this.multiplier = multiplier;
		}

		public Duration getMaxInterval() {
			return this.maxInterval;
		}

		public void setMaxInterval(Duration maxInterval) {
			this.maxInterval = maxInterval;
		}

		/**
		 * The back-off of these settings, which never gives up.
		 * @return a new back-off
		 * @throws IllegalArgumentException when a value is out of range
		 */
		public ExponentialBackOff toBackOff() {
			if (this.initialInterval.isNegative() || this.maxInterval.compareTo(this.initialInterval) < 0
					|| this.multiplier < 1) {
				throw new IllegalArgumentException("idempotency.listener-back-off needs 0 <= initial-interval <= "
						+ "max-interval and a multiplier of at least 1, not " + this.initialInterval + ", "
						+ this.maxInterval + " and " + this.multiplier);
			}
			ExponentialBackOff backOff = new ExponentialBackOff(this.initialInterval.toMillis(), this.multiplier);
			backOff.setMaxInterval(this.maxInterval.toMillis());
			return backOff;
		}

	}

}
