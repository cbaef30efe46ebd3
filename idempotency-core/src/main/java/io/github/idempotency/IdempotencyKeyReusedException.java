package io.github.idempotency;

/**
 * The key was used before with a different payload (its fingerprint differs).
 */
public class IdempotencyKeyReusedException extends IdempotencyException {

	public IdempotencyKeyReusedException(String message) {
		super(message);
	}

	public IdempotencyKeyReusedException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
