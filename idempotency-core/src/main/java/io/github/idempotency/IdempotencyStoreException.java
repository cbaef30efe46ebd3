package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The store could not be reached or answered an error.
 */
public class IdempotencyStoreException extends IdempotencyException {

	public IdempotencyStoreException(String message) {
		super(message);
	}

	public IdempotencyStoreException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return true;
	}

}
