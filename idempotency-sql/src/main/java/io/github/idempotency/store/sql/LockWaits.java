package io.github.idempotency.store.sql;

/**
 * How the wait of a step (a completion, a failure, a release, an extension, a cleanup) for
 * a row another transaction holds is bounded by the lock timeout. The claims' own
 * statements bound their waits themselves, as their database can.
 */
public abstract sealed class LockWaits {

	/** By a query timeout of the lock timeout, set on the statement by its executor. */
	public static final class ByQueryTimeout extends LockWaits {
	}

	/**
	 * As {@link ByQueryTimeout}, but for a leased completion that is a transaction of its
	 * own, which bounds its wait in its own statement, a setting that ends with it.
	 */
	public static final class InStatement extends LockWaits {

		private final String completeLeased;

		/** @param completeLeased that completion, with the parameters of {@link SqlStatements#complete} */
		InStatement(String completeLeased) {
			this.completeLeased = completeLeased;
		}

		/** @return the {@code completeLeased} given to the constructor */
		public String completeLeased() {
			return this.completeLeased;
		}

	}

}
