package io.github.idempotency;

/**
 * The key is being processed by another run; retrying later may succeed.
 */
public class IdempotencyInProgressException extends IdempotencyException {

	public IdempotencyInProgressException(String message) {
		super(message);
	}

	public IdempotencyInProgressException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return true;
	}

}
