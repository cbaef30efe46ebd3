package io.github.idempotency;

/**
 * The key expression gave {@code null} or a blank value; the method was not run.
 */
public class MissingIdempotencyKeyException extends IdempotencyException {

	public MissingIdempotencyKeyException(String message) {
		super(message);
	}

	public MissingIdempotencyKeyException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
