package io.github.idempotency.store.sql;

import java.util.function.IntFunction;

/**
 * How a database claims a batch of records. Whatever the way, what the batch statements
 * cannot decide is claimed again on its own, by the single claim.
 */
public abstract sealed class BatchClaimSql {

	/**
	 * One read of the rows that exist and one insert of all the others, all or nothing
	 * (a duplicate key inserts none), each naming its rows.
	 */
	public static final class ReadThenInsert extends BatchClaimSql {

		private final IntFunction<String> selectAll;

		private final IntFunction<String> insertAll;

		/**
		 * @param selectAll per number of rows, the read ({@link SqlStatements#selectAll})
		 * @param insertAll per number of rows, the insert ({@link SqlStatements#insertAll})
		 */
		ReadThenInsert(IntFunction<String> selectAll, IntFunction<String> insertAll) {
			this.selectAll = selectAll;
			this.insertAll = insertAll;
		}

		/** @return the {@code selectAll} given to the constructor */
		public IntFunction<String> selectAll() {
			return this.selectAll;
		}

		/** @return the {@code insertAll} given to the constructor */
		public IntFunction<String> insertAll() {
			return this.insertAll;
		}

	}

	/**
	 * Outside a transaction, one statement that inserts each record whose row does not
	 * exist and answers per record one row of the {@link SqlStatements#COLUMNS}, the record
	 * inserted or the row found (locked for the statement); inside the caller's
	 * transaction, where those locks would last until it ends, and for a workflow that
	 * reads first, {@link #otherwise}.
	 */
	public static final class Upsert extends BatchClaimSql {

		private final IntFunction<String> upsertAll;

		private final ReadThenInsert otherwise;

		/**
		 * @param upsertAll per number of rows, the statement; the parameters of
		 * {@link SqlStatements#insertAll}
		 * @param otherwise the way inside the caller's transaction or reading first
		 */
		Upsert(IntFunction<String> upsertAll, ReadThenInsert otherwise) {
			this.upsertAll = upsertAll;
			this.otherwise = otherwise;
		}

		/** @return the {@code upsertAll} given to the constructor */
		public IntFunction<String> upsertAll() {
			return this.upsertAll;
		}

		/** @return the {@code otherwise} given to the constructor */
		public ReadThenInsert otherwise() {
			return this.otherwise;
		}

	}

	/**
	 * One statement over arrays, one element per claim (no key twice): {@code workflows},
	 * {@code keys}, {@code fingerprints}, {@code owners} (text), {@code leaseUntils},
	 * {@code expiresAts} (64-bit integers), and the scalars {@code status} and {@code now}.
	 */
	public static final class OverArrays extends BatchClaimSql {

		private final String claimAll;

		private final String claimAllInTransaction;

		private final String insertFirst;

		private final String insertFirstInTransaction;

		private final String readAll;

		/**
		 * @param claimAll inserts the records whose rows do not exist, and answers per claim
		 * at most one row: {@code claimed}, {@code position} (from 1) and the
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
		OverArrays(String claimAll, String claimAllInTransaction, String insertFirst, String insertFirstInTransaction,
				String readAll) {
			this.claimAll = claimAll;
			this.claimAllInTransaction = claimAllInTransaction;
			this.insertFirst = insertFirst;
			this.insertFirstInTransaction = insertFirstInTransaction;
			this.readAll = readAll;
		}

		/** @return the {@code claimAll} given to the constructor */
		public String claimAll() {
			return this.claimAll;
		}

		/** @return the {@code claimAllInTransaction} given to the constructor */
		public String claimAllInTransaction() {
			return this.claimAllInTransaction;
		}

		/** @return the {@code insertFirst} given to the constructor */
		public String insertFirst() {
			return this.insertFirst;
		}

		/** @return the {@code insertFirstInTransaction} given to the constructor */
		public String insertFirstInTransaction() {
			return this.insertFirstInTransaction;
		}

		/** @return the {@code readAll} given to the constructor */
		public String readAll() {
			return this.readAll;
		}

	}

}
