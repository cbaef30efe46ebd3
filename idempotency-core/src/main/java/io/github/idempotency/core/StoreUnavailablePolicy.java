package io.github.idempotency.core;

/**
 * What a call does when the store cannot be reached.
 */
public enum StoreUnavailablePolicy {

	/** Throw {@code IdempotencyStoreException}; the method is not run. */
	FAIL_CLOSED,

	/** Run the method unprotected, log a warning and count {@code outcome=store_error}. */
	FAIL_OPEN

}
