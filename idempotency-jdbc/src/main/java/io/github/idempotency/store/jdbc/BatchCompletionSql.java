package io.github.idempotency.store.jdbc;

import java.util.function.BiFunction;

/**
 * How a database completes a batch of claims in one round trip.
 */
sealed interface BatchCompletionSql {

	/** The single completions ({@link SqlStatements#complete}), sent together, each counted. */
	record OneByOne() implements BatchCompletionSql {
	}

	/**
	 * One statement for a number of claims that answers only how many rows it completed.
	 * The parameters of claim {@code i} are {@code workflow}, {@code key}, {@code owner},
	 * {@code response} and {@code expiresAt} suffixed with {@code i}, and the scalar
	 * {@code now}.
	 * @param completeAll per fence and number of claims, the statement
	 */
	record Counted(BiFunction<Fence, Integer, String> completeAll) implements BatchCompletionSql {
	}

	/**
	 * One statement over arrays, one element per claim: {@code workflows}, {@code keys},
	 * {@code owners}, {@code responses} (text), {@code expiresAts} (64-bit integers), and
	 * the scalar {@code now}; it answers the {@code position} (from 1) of each record it
	 * completed.
	 * @param leased for claims held by their leases
	 * @param leasedBoundingItsWaits {@code leased} bounding its own lock waits, for a
	 * statement that is a transaction of its own (see {@link LockWaits.InStatement})
	 * @param inTransaction for claims held by the caller's transaction
	 */
	record OverArrays(String leased, String leasedBoundingItsWaits, String inTransaction)
			implements BatchCompletionSql {
	}

}
