package io.github.idempotency.store.jdbc;

/**
 * How the wait of a step (a completion, a failure, a release, an extension, a cleanup) for
 * a row another transaction holds is bounded by the lock timeout. The claims' own
 * statements bound their waits themselves, as their database can.
 */
sealed interface LockWaits {

	/** By a query timeout of the lock timeout, set on the statement by its executor. */
	record ByQueryTimeout() implements LockWaits {
	}

	/**
	 * As {@link ByQueryTimeout}, but for a leased completion that is a transaction of its
	 * own, which bounds its wait in its own statement, a setting that ends with it.
	 * @param completeLeased that completion, with the parameters of
	 * {@link SqlStatements#complete}
	 */
	record InStatement(String completeLeased) implements LockWaits {
	}

}
