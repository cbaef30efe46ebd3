package io.github.idempotency.store.jdbc;

import java.util.function.IntFunction;

/**
 * How a database claims a batch of records. Whatever the way, what the batch statements
 * cannot decide is claimed again on its own, by the single claim.
 */
sealed interface BatchClaimSql {

	/**
	 * One read of the rows that exist and one insert of all the others, all or nothing
	 * (a duplicate key inserts none), each naming its rows.
	 * @param selectAll per number of rows, the read ({@link SqlStatements#selectAll})
	 * @param insertAll per number of rows, the insert ({@link SqlStatements#insertAll})
	 */
	record ReadThenInsert(IntFunction<String> selectAll, IntFunction<String> insertAll) implements BatchClaimSql {
	}

	/**
	 * Outside a transaction, one statement that inserts each record whose row does not
	 * exist and answers per record one row of the {@link SqlStatements#COLUMNS}, the record
	 * inserted or the row found (locked for the statement); inside the caller's
	 * transaction, where those locks would last until it ends, and for a workflow that
	 * reads first, {@code otherwise}.
	 * @param upsertAll per number of rows, the statement; the parameters of
	 * {@link SqlStatements#insertAll}
	 * @param otherwise the way inside the caller's transaction or reading first
	 */
	record Upsert(IntFunction<String> upsertAll, ReadThenInsert otherwise) implements BatchClaimSql {
	}

	/**
	 * One statement over arrays, one element per claim (no key twice): {@code workflows},
	 * {@code keys}, {@code fingerprints}, {@code owners} (text), {@code leaseUntils},
	 * {@code expiresAts} (64-bit integers), and the scalars {@code status} and {@code now}.
	 * @param claimAll inserts the records whose rows do not exist, and answers per claim at
	 * most one row: {@code claimed}, {@code position} (from 1) and the
	 * {@link SqlStatements#FIELDS} of the existing record (none for an inserted one); a
	 * claim that has no row found a row committed while the statement ran
	 * @param claimAllInTransaction {@code claimAll} inside the caller's transaction: it
	 * leaves that transaction's settings as they were, and may answer a row with
	 * {@code NULL} in every column
	 * @param insertFirst for keys most likely new: inserts each record whose row does not
	 * exist, in the order given, and answers the {@code workflow} and
	 * {@code idempotency_key} of those it inserted
	 * @param insertFirstInTransaction {@code insertFirst} inside the caller's transaction:
	 * it answers a row with {@code NULL} in both columns when it inserted none
	 * @param readAll after {@code insertFirst}, a read of the rows named by the arrays
	 * {@code workflows} and {@code keys}, answering the {@link SqlStatements#COLUMNS}
	 */
	record OverArrays(String claimAll, String claimAllInTransaction, String insertFirst,
			String insertFirstInTransaction, String readAll) implements BatchClaimSql {
	}

}
