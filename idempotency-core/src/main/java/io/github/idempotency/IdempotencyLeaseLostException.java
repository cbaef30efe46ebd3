package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * This run's claim expired and another run took it over; its result was not stored.
 */
public class IdempotencyLeaseLostException extends IdempotencyException {

	public IdempotencyLeaseLostException(String message) {
		super(message);
	}

	public IdempotencyLeaseLostException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return true;
	}

}
