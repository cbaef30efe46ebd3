package io.github.idempotency.store.sql;

/**
 * How a database claims one record: every database has the plain
 * {@link SqlStatements#insert insert}, followed by a read of the row when it found one; a
 * database may also have one statement that inserts the record unless its row exists and
 * answers the row it found.
 * <p>
 * Such a statement takes {@link SqlStatements#RECORD_PARAMETERS} and answers one row with a
 * boolean column {@code claimed} and the {@link SqlStatements#COLUMNS} — the inserted
 * record, or the existing one — or no row at all when the insert found a row that the
 * statement's snapshot does not show (one committed while the insert waited for it).
 */
public abstract sealed class ClaimSql {

	/** The insert, and a read of the row in a statement of its own when it found one. */
	public static final class InsertThenRead extends ClaimSql {
	}

	/**
	 * Outside a transaction one statement (an upsert that locks the row it found for that
	 * statement only); inside the caller's transaction, where that lock would last until
	 * the transaction ends, the insert then the read.
	 */
	public static final class UpsertOutsideTransaction extends ClaimSql {

		private final String claim;

		/** @param claim the one statement */
		UpsertOutsideTransaction(String claim) {
			this.claim = claim;
		}

		/** @return the {@code claim} given to the constructor */
		public String claim() {
			return this.claim;
		}

	}

	/**
	 * One statement that reads the row and inserts only when it found none, outside and
	 * inside the caller's transaction; for a key most likely new (see
	 * {@code ReadFirst}) the plain insert is cheaper, the row
	 * read only when it exists.
	 */
	public static final class ReadOrInsert extends ClaimSql {

		private final String claim;

		private final String claimInTransaction;

		/**
		 * @param claim the statement outside a transaction
		 * @param claimInTransaction the statement inside the caller's transaction: it leaves
		 * that transaction's settings as they were, and may answer its row with {@code NULL}
		 * in every column instead of no row
		 */
		ReadOrInsert(String claim, String claimInTransaction) {
			this.claim = claim;
			this.claimInTransaction = claimInTransaction;
		}

		/** @return the {@code claim} given to the constructor */
		public String claim() {
			return this.claim;
		}

		/** @return the {@code claimInTransaction} given to the constructor */
		public String claimInTransaction() {
			return this.claimInTransaction;
		}

	}

}
