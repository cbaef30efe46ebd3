package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The key expression gave {@code null} or a blank value; the method was not run.
 */
public class MissingIdempotencyKeyException extends IdempotencyException {

	public MissingIdempotencyKeyException(String message) {
		super(message);
	}

	public MissingIdempotencyKeyException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
