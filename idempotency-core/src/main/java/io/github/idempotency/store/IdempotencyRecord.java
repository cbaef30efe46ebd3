package io.github.idempotency.store;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * One record of the store, as read.
 *
 * @param id workflow and key
 * @param status the state
 * @param fingerprint SHA-256 of the payload of the first call, or {@code null}
 * @param owner the fencing token of the run that holds or held the claim
 * @param attempt 1 for the first run, incremented by each takeover
 * @param leaseUntil when the lease of an {@code IN_PROGRESS} record runs out
 * @param recoveryPoint the last recovery point saved, or {@code null}
 * @param response the serialized result of a {@code COMPLETED} record, {@code null} for
 * {@code void}
 * @param errorType the exception class name of a {@code FAILED} record
 * @param errorMessage the exception message of a {@code FAILED} record
 * @param createdAt when the record was first claimed
 * @param updatedAt when the record last changed
 * @param expiresAt when the record may be deleted; afterwards it counts as absent
 */
public record IdempotencyRecord(RecordId id, RecordStatus status, @Nullable String fingerprint, String owner,
		int attempt, Instant leaseUntil, @Nullable String recoveryPoint, @Nullable String response,
		@Nullable String errorType, @Nullable String errorMessage, Instant createdAt, Instant updatedAt,
		Instant expiresAt) {

	/**
	 * Whether the record counts as absent at {@code now}.
	 * @param now the current time
	 * @return {@code true} once {@code expiresAt} has passed
	 */
	public boolean isExpired(Instant now) {
		return !now.isBefore(this.expiresAt);
	}

	/**
	 * Whether an {@code IN_PROGRESS} record's lease ran out at {@code now}.
	 * @param now the current time
	 * @return {@code true} once {@code leaseUntil} has passed
	 */
	public boolean isLeaseExpired(Instant now) {
		return !now.isBefore(this.leaseUntil);
	}

}
