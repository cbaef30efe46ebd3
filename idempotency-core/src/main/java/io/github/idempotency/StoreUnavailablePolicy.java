package io.github.idempotency;

/**
 * What a call does when the store cannot be reached.
 * <p>
 * A store that refuses the call itself, with an {@code IllegalStateException} or an
 * {@code IllegalArgumentException} (the jdbc store asked to claim inside a read-only
 * transaction, for example), is not unreachable: that exception is thrown as it is under
 * either policy, and the method is not run.
 */
public enum StoreUnavailablePolicy {

	/** Throw {@code IdempotencyStoreException}; the method is not run. */
	FAIL_CLOSED,

	/** Run the method unprotected, log a warning and count {@code outcome=store_error}. */
	FAIL_OPEN

}
