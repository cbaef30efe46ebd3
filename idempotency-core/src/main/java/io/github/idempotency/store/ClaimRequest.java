package io.github.idempotency.store;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * What {@link IdempotencyStore#claim(ClaimRequest)} is asked to claim.
 *
 * @param id workflow and key
 * @param owner the fencing token of this run (unique per claim)
 * @param fingerprint SHA-256 of this call's payload, or {@code null}
 * @param leaseTtl how long the claim is held without renewal
 * @param retention how long the finished record is kept
 */
public record ClaimRequest(RecordId id, String owner, @Nullable String fingerprint, Duration leaseTtl,
		Duration retention) {

}
