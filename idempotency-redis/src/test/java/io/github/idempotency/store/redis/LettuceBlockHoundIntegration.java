package io.github.idempotency.store.redis;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * What BlockHound lets Lettuce do on its event loop in this module's tests (found by
 * {@code BlockHound.install()} through {@code META-INF/services}): wait for the short
 * internal lock of an endpoint ({@code SharedLock}) that guards writes to its channel, which
 * the contract's racing threads contend. It never waits for Redis; the stores' own steps stay
 * checked. Without it, one run of the cluster tests hung with every writer of a node's
 * endpoint spinning in {@code SharedLock.incrementWriters} (its state left exclusive, as
 * lettuce issues 3804 and 3880 describe for an error thrown inside that lock), which an
 * error of BlockHound's inside Lettuce's lock would explain.
 */
public class LettuceBlockHoundIntegration implements BlockHoundIntegration {

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "lockWritersExclusive");
	}

}
