package io.github.idempotency.store;

/**
 * The state of a record.
 */
public enum RecordStatus {

	/** Claimed by a run that holds a lease. */
	IN_PROGRESS,

	/** Finished; the response is stored. */
	COMPLETED,

	/** Failed permanently; the error is stored and replayed. */
	FAILED

}
