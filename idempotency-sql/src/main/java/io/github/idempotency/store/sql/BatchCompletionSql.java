package io.github.idempotency.store.sql;

import java.util.function.BiFunction;

/**
 * How a database completes a batch of claims in one round trip.
 */
public abstract sealed class BatchCompletionSql {

	/** The single completions ({@link SqlStatements#complete}), sent together, each counted. */
	public static final class OneByOne extends BatchCompletionSql {
	}

	/**
	 * One statement for a number of claims that answers only how many rows it completed.
	 * The parameters of claim {@code i} are {@code workflow}, {@code key}, {@code owner},
	 * {@code response} and {@code expiresAt} suffixed with {@code i}, and the scalar
	 * {@code now}.
	 */
	public static final class Counted extends BatchCompletionSql {

		private final BiFunction<Fence, Integer, String> completeAll;

		/** @param completeAll per fence and number of claims, the statement */
		Counted(BiFunction<Fence, Integer, String> completeAll) {
			this.completeAll = completeAll;
		}

		/** @return the {@code completeAll} given to the constructor */
		public BiFunction<Fence, Integer, String> completeAll() {
			return this.completeAll;
		}

	}

	/**
	 * One statement over arrays, one element per claim: {@code workflows}, {@code keys},
	 * {@code owners}, {@code responses} (text), {@code expiresAts} (64-bit integers), and
	 * the scalar {@code now}; it answers the {@code position} (from 1) of each record it
	 * completed.
	 */
	public static final class OverArrays extends BatchCompletionSql {

		private final String leased;

		private final String leasedBoundingItsWaits;

		private final String inTransaction;

		/**
		 * @param leased for claims held by their leases
		 * @param leasedBoundingItsWaits {@code leased} bounding its own lock waits, for a
		 * statement that is a transaction of its own (see {@link LockWaits.InStatement})
		 * @param inTransaction for claims held by the caller's transaction
		 */
		OverArrays(String leased, String leasedBoundingItsWaits, String inTransaction) {
			this.leased = leased;
			this.leasedBoundingItsWaits = leasedBoundingItsWaits;
			this.inTransaction = inTransaction;
		}

		/** @return the {@code leased} given to the constructor */
		public String leased() {
			return this.leased;
		}

		/** @return the {@code leasedBoundingItsWaits} given to the constructor */
		public String leasedBoundingItsWaits() {
			return this.leasedBoundingItsWaits;
		}

		/** @return the {@code inTransaction} given to the constructor */
		public String inTransaction() {
			return this.inTransaction;
		}

	}

}
