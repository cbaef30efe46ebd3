package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The first run of this key failed with one of its {@link Idempotent#recordFailureFor()}
 * types; the failure was stored and is replayed instead of running the method again.
 * Not retryable.
 */
public class IdempotentFailureReplayedException extends IdempotencyException {

	private final String originalType;

	private final @Nullable String originalMessage;

	public IdempotentFailureReplayedException(String workflow, String originalType, @Nullable String originalMessage) {
		super("Operation '" + workflow + "' failed permanently before with " + originalType
				+ ((originalMessage != null) ? ": " + originalMessage : ""));
		this.originalType = originalType;
		this.originalMessage = originalMessage;
	}

	/**
	 * The class name of the exception the original run threw.
	 * @return the original exception's class name
	 */
	public String getOriginalType() {
		return this.originalType;
	}

	/**
	 * The message of the exception the original run threw.
	 * @return the original message, or {@code null}
	 */
	public @Nullable String getOriginalMessage() {
		return this.originalMessage;
	}

	@Override
	public boolean isRetryable() {
		return false;
	}

}
