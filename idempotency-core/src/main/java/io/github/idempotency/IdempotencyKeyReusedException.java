package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The key was used before with a different payload (its fingerprint differs).
 */
public class IdempotencyKeyReusedException extends IdempotencyException {

	public IdempotencyKeyReusedException(String message) {
		super(message);
	}

	public IdempotencyKeyReusedException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
