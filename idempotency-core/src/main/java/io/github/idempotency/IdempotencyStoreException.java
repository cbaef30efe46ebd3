package io.github.idempotency;

/**
 * The store could not be reached or answered an error.
 */
public class IdempotencyStoreException extends IdempotencyException {

	public IdempotencyStoreException(String message) {
		super(message);
	}

	public IdempotencyStoreException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return true;
	}

}
