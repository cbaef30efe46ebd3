package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The operation ran, but its result cannot be stored: writing it failed (a getter threw, a
 * value the JSON mapper rejects at run time). The record is settled with this failure
 * instead of its result, so that no later delivery runs the operation again: they get an
 * {@link IdempotentFailureReplayedException} whose original type is this class and whose
 * message names the result's type and what failed. The run that ran the operation returns
 * its result as usual (and logs this exception at ERROR). Not retryable.
 */
public class IdempotentResultNotStoredException extends IdempotencyException {

	public IdempotentResultNotStoredException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
