package io.github.idempotency;

/**
 * What a call does when it finds its key claimed by a run that is still in progress.
 */
public enum InProgressPolicy {

	/**
	 * Poll with backoff until the other run finishes (then return its result) or is taken
	 * over (then run), up to {@code idempotency.wait-timeout}; then throw
	 * {@link IdempotencyInProgressException}.
	 */
	WAIT,

	/**
	 * Throw {@link IdempotencyInProgressException} at once.
	 */
	REJECT,

	/**
	 * Use {@code idempotency.on-in-progress}.
	 */
	DEFAULT

}
