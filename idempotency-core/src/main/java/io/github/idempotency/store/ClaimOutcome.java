package io.github.idempotency.store;

/**
 * The answer of one atomic claim.
 */
public enum ClaimOutcome {

	/**
	 * No live record, or an {@code IN_PROGRESS} one whose lease ran out (a takeover):
	 * the caller runs the operation.
	 */
	ACQUIRED,

	/** A {@code COMPLETED} record: its response is the result. */
	DUPLICATE,

	/** A {@code FAILED} record: its error is replayed. */
	FAILED,

	/** An {@code IN_PROGRESS} record with a live lease. */
	IN_PROGRESS,

	/** A record whose fingerprint differs from the call's (checked before the status). */
	MISMATCH

}
