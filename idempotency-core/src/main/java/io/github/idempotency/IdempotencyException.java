package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Base class of every exception the idempotency starter throws. Unchecked.
 */
public abstract class IdempotencyException extends RuntimeException {

	protected IdempotencyException(String message) {
		super(message);
	}

	protected IdempotencyException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

	/**
	 * Whether delivering the same message again may succeed. Broker integrations use this
	 * to choose between a retry and the dead-letter route.
	 * @return {@code true} when a retry may succeed
	 */
	public abstract boolean isRetryable();

}
