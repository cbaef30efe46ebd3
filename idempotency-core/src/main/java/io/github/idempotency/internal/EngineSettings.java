package io.github.idempotency.internal;

import io.github.idempotency.StoreUnavailablePolicy;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;
import org.springframework.util.Assert;

/**
 * The engine's defaults, usually bound from the {@code idempotency.*} properties. Build
 * them with {@link #builder()}.
 *
 * @param leaseTtl how long a claim is held without renewal
 * @param leaseRenewal whether running claims are renewed every {@code leaseRenewalInterval}
 * @param leaseRenewalInterval the time between two renewals of a running claim's lease:
 * positive and shorter than {@code leaseTtl}; an operation with a lease of its own is
 * renewed at the same fraction of it ({@link #leaseRenewalInterval(Duration)}). A store
 * outage shorter than {@code leaseTtl - leaseRenewalInterval - 500 ms} never runs an
 * operation twice
 * @param retention how long a finished record is kept
 * @param onInProgress {@link InProgressPolicy#WAIT} or {@link InProgressPolicy#REJECT}
 * @param waitTimeout how long {@code WAIT} waits for another run
 * @param storeUnavailable what to do when the store cannot be reached
 * @param maxKeyLength the longest key accepted, in characters
 */
public record EngineSettings(Duration leaseTtl, boolean leaseRenewal, Duration leaseRenewalInterval,
		Duration retention, InProgressPolicy onInProgress, Duration waitTimeout, StoreUnavailablePolicy storeUnavailable,
		int maxKeyLength) {

	public EngineSettings {
		Assert.isTrue(!leaseTtl.isNegative() && !leaseTtl.isZero(), "'leaseTtl' must be positive");
		Assert.isTrue(!leaseRenewalInterval.isNegative() && !leaseRenewalInterval.isZero()
				&& leaseRenewalInterval.compareTo(leaseTtl) < 0, () -> "'leaseRenewalInterval' ("
						+ leaseRenewalInterval + ") must be positive and shorter than 'leaseTtl' (" + leaseTtl + ")");
		Assert.isTrue(!retention.isNegative() && !retention.isZero(), "'retention' must be positive");
		Assert.isTrue(!waitTimeout.isNegative(), "'waitTimeout' must not be negative");
		Assert.isTrue(onInProgress != InProgressPolicy.DEFAULT, "'onInProgress' must be WAIT or REJECT");
		Assert.isTrue(maxKeyLength > 0, "'maxKeyLength' must be positive");
	}

	/**
	 * Settings whose leases are renewed every {@code leaseTtl / 3}.
	 * @param leaseTtl how long a claim is held without renewal
	 * @param leaseRenewal whether running claims are renewed
	 * @param retention how long a finished record is kept
	 * @param onInProgress {@link InProgressPolicy#WAIT} or {@link InProgressPolicy#REJECT}
	 * @param waitTimeout how long {@code WAIT} waits for another run
	 * @param storeUnavailable what to do when the store cannot be reached
	 * @param maxKeyLength the longest key accepted, in characters
	 * @see #builder()
	 */
	public EngineSettings(Duration leaseTtl, boolean leaseRenewal, Duration retention, InProgressPolicy onInProgress,
			Duration waitTimeout, StoreUnavailablePolicy storeUnavailable, int maxKeyLength) {
		this(leaseTtl, leaseRenewal, leaseTtl.dividedBy(3), retention, onInProgress, waitTimeout, storeUnavailable,
				maxKeyLength);
	}

	/**
	 * The documented defaults: 30s lease, renewed every 10s; 7 days retention; wait up to
	 * 45s; fail closed; keys up to 255 characters.
	 * @return the default settings
	 */
	public static EngineSettings defaults() {
		return builder().build();
	}

	/**
	 * A builder that starts from the {@link #defaults()}.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * The renewal interval of a lease of {@code leaseTtl}: {@link #leaseRenewalInterval()}
	 * for the settings' own lease, the same fraction of an operation's own lease.
	 * @param leaseTtl the lease
	 * @return the time between two renewals of it
	 */
	public Duration leaseRenewalInterval(Duration leaseTtl) {
		if (leaseTtl.equals(this.leaseTtl)) {
			return this.leaseRenewalInterval;
		}
		double fraction = (double) this.leaseRenewalInterval.toNanos() / this.leaseTtl.toNanos();
		return Duration.ofNanos((long) (leaseTtl.toNanos() * fraction));
	}

	/**
	 * Builds {@link EngineSettings}; what is not set is the default.
	 */
	public static final class Builder {

		private Duration leaseTtl = Duration.ofSeconds(30);

		private boolean leaseRenewal = true;

		private @Nullable Duration leaseRenewalInterval;

		private Duration retention = Duration.ofDays(7);

		private InProgressPolicy onInProgress = InProgressPolicy.WAIT;

		private Duration waitTimeout = Duration.ofSeconds(45);

		private StoreUnavailablePolicy storeUnavailable = StoreUnavailablePolicy.FAIL_CLOSED;

		private int maxKeyLength = 255;

		private Builder() {
		}

		/**
		 * @param leaseTtl how long a claim is held without renewal (default 30s)
		 * @return this builder
		 */
		public Builder leaseTtl(Duration leaseTtl) {
			this.leaseTtl = leaseTtl;
			return this;
		}

		/**
		 * @param leaseRenewal whether running claims are renewed (default {@code true})
		 * @return this builder
		 */
		public Builder leaseRenewal(boolean leaseRenewal) {
			this.leaseRenewal = leaseRenewal;
			return this;
		}

		/**
		 * @param leaseRenewalInterval the time between two renewals; {@code null} (the
		 * default): {@code leaseTtl / 3}
		 * @return this builder
		 */
		public Builder leaseRenewalInterval(@Nullable Duration leaseRenewalInterval) {
			this.leaseRenewalInterval = leaseRenewalInterval;
			return this;
		}

		/**
		 * @param retention how long a finished record is kept (default 7 days)
		 * @return this builder
		 */
		public Builder retention(Duration retention) {
			this.retention = retention;
			return this;
		}

		/**
		 * @param onInProgress {@link InProgressPolicy#WAIT} (the default) or
		 * {@link InProgressPolicy#REJECT}
		 * @return this builder
		 */
		public Builder onInProgress(InProgressPolicy onInProgress) {
			this.onInProgress = onInProgress;
			return this;
		}

		/**
		 * @param waitTimeout how long {@code WAIT} waits for another run (default 45s)
		 * @return this builder
		 */
		public Builder waitTimeout(Duration waitTimeout) {
			this.waitTimeout = waitTimeout;
			return this;
		}

		/**
		 * @param storeUnavailable what to do when the store cannot be reached (default
		 * {@link StoreUnavailablePolicy#FAIL_CLOSED})
		 * @return this builder
		 */
		public Builder storeUnavailable(StoreUnavailablePolicy storeUnavailable) {
			this.storeUnavailable = storeUnavailable;
			return this;
		}

		/**
		 * @param maxKeyLength the longest key accepted, in characters (default 255)
		 * @return this builder
		 */
		public Builder maxKeyLength(int maxKeyLength) {
			this.maxKeyLength = maxKeyLength;
			return this;
		}

		/**
		 * @return the settings
		 * @throws IllegalArgumentException when a value is out of range
		 */
		public EngineSettings build() {
			Duration interval = (this.leaseRenewalInterval != null) ? this.leaseRenewalInterval
					: this.leaseTtl.dividedBy(3);
			return new EngineSettings(this.leaseTtl, this.leaseRenewal, interval, this.retention, this.onInProgress,
					this.waitTimeout, this.storeUnavailable, this.maxKeyLength);
		}

	}

}
