package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The key is not acceptable: longer than {@code idempotency.max-key-length}, or the key
 * (or payload) expression cannot be evaluated on the method's arguments (the evaluation
 * failure is the cause). The method was not run. Not retryable: the same message fails
 * the same way.
 */
public class InvalidIdempotencyKeyException extends IdempotencyException {

	public InvalidIdempotencyKeyException(String message) {
		super(message);
	}

	public InvalidIdempotencyKeyException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
