package io.github.idempotency;

/**
 * The key is not acceptable (longer than {@code idempotency.max-key-length}); the method was not run.
 */
public class InvalidIdempotencyKeyException extends IdempotencyException {

	public InvalidIdempotencyKeyException(String message) {
		super(message);
	}

	public InvalidIdempotencyKeyException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
