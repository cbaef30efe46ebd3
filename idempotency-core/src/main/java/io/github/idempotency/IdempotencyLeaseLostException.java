package io.github.idempotency;

/**
 * This run's claim expired and another run took it over; its result was not stored.
 */
public class IdempotencyLeaseLostException extends IdempotencyException {

	public IdempotencyLeaseLostException(String message) {
		super(message);
	}

	public IdempotencyLeaseLostException(String message, Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return true;
	}

}
