package io.github.idempotency.store;

import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The claim decision, written once for the stores that take it in Java after reading the
 * record under a lock (or inside an atomic map operation). Stores that decide on the
 * server (Lua) implement the same rules; the contract suite holds them to it.
 */
public final class ClaimRules {

	private ClaimRules() {
	}

	/**
	 * Decides what a claim finds.
	 * @param existing the stored record, or {@code null}
	 * @param fingerprint the call's fingerprint, or {@code null}
	 * @param now the current time
	 * @return {@link ClaimOutcome#ACQUIRED} when the caller may write its claim (a new
	 * record when {@code existing} is {@code null} or expired, a takeover otherwise)
	 */
	public static ClaimOutcome decide(@Nullable IdempotencyRecord existing, @Nullable String fingerprint,
			Instant now) {
		if (existing == null || existing.isExpired(now)) {
			return ClaimOutcome.ACQUIRED;
		}
		if (fingerprint != null && existing.fingerprint() != null
				&& !Objects.equals(fingerprint, existing.fingerprint())) {
			return ClaimOutcome.MISMATCH;
		}
		return switch (existing.status()) {
			case COMPLETED -> ClaimOutcome.DUPLICATE;
			case FAILED -> ClaimOutcome.FAILED;
			case IN_PROGRESS -> existing.isLeaseExpired(now) ? ClaimOutcome.ACQUIRED : ClaimOutcome.IN_PROGRESS;
		};
	}

	/**
	 * The record a successful claim writes: attempt 1 for a new record; for a takeover of
	 * {@code existing}, attempt + 1 with its recovery point and creation time kept.
	 * @param existing the stored record, or {@code null}
	 * @param request the claim
	 * @param now the current time
	 * @return the record to store
	 */
	public static IdempotencyRecord claimed(@Nullable IdempotencyRecord existing, ClaimRequest request, Instant now) {
		Instant leaseUntil = now.plus(request.leaseTtl());
		Instant expiresAt = leaseUntil.plus(request.retention());
		if (existing == null || existing.isExpired(now)) {
			return new IdempotencyRecord(request.id(), RecordStatus.IN_PROGRESS, request.fingerprint(),
					request.owner(), 1, leaseUntil, null, null, null, null, now, now, expiresAt);
		}
		String fingerprint = (existing.fingerprint() != null) ? existing.fingerprint() : request.fingerprint();
		return new IdempotencyRecord(request.id(), RecordStatus.IN_PROGRESS, fingerprint, request.owner(),
				existing.attempt() + 1, leaseUntil, existing.recoveryPoint(), null, null, null, existing.createdAt(),
				now, expiresAt);
	}

}
