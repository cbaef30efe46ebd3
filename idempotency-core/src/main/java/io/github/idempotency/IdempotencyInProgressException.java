package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The key is being processed by another run; retrying later may succeed.
 */
public class IdempotencyInProgressException extends IdempotencyException {

	public IdempotencyInProgressException(String message) {
		super(message);
	}

	public IdempotencyInProgressException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return true;
	}

}
