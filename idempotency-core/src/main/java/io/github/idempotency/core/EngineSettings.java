package io.github.idempotency.core;

import java.time.Duration;

import io.github.idempotency.InProgressPolicy;
import org.springframework.util.Assert;

/**
 * The engine's defaults, usually bound from the {@code idempotency.*} properties.
 *
 * @param leaseTtl how long a claim is held without renewal
 * @param leaseRenewal whether running claims are renewed every {@code leaseTtl / 3}
 * @param retention how long a finished record is kept
 * @param onInProgress {@link InProgressPolicy#WAIT} or {@link InProgressPolicy#REJECT}
 * @param waitTimeout how long {@code WAIT} waits for another run
 * @param storeUnavailable what to do when the store cannot be reached
 * @param maxKeyLength the longest key accepted, in characters
 */
public record EngineSettings(Duration leaseTtl, boolean leaseRenewal, Duration retention,
		InProgressPolicy onInProgress, Duration waitTimeout, StoreUnavailablePolicy storeUnavailable,
		int maxKeyLength) {

	public EngineSettings {
		Assert.isTrue(!leaseTtl.isNegative() && !leaseTtl.isZero(), "'leaseTtl' must be positive");
		Assert.isTrue(!retention.isNegative() && !retention.isZero(), "'retention' must be positive");
		Assert.isTrue(!waitTimeout.isNegative(), "'waitTimeout' must not be negative");
		Assert.isTrue(onInProgress != InProgressPolicy.DEFAULT, "'onInProgress' must be WAIT or REJECT");
		Assert.isTrue(maxKeyLength > 0, "'maxKeyLength' must be positive");
	}

	/**
	 * The documented defaults: 30s lease, renewed; 7 days retention; wait up to 45s;
	 * fail closed; keys up to 255 characters.
	 * @return the default settings
	 */
	public static EngineSettings defaults() {
		return new EngineSettings(Duration.ofSeconds(30), true, Duration.ofDays(7), InProgressPolicy.WAIT,
				Duration.ofSeconds(45), StoreUnavailablePolicy.FAIL_CLOSED, 255);
	}

}
