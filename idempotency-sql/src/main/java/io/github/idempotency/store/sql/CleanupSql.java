package io.github.idempotency.store.sql;

/**
 * How a database deletes a batch of expired records and what the statement answers: an
 * update count, or the count and the latest expiry deleted, so that the next batch starts
 * its walk along the {@code expires_at} index from there instead of from the index's first
 * entry (which, on PostgreSQL, leads through every entry deleted earlier in the run until
 * a vacuum removes them).
 */
public abstract sealed class CleanupSql {

	private final String sql;

	private CleanupSql(String sql) {
		this.sql = sql;
	}

	/**
	 * The statement.
	 * @return its text
	 */
	public final String sql() {
		return this.sql;
	}

	/** A {@code DELETE} of {@code :now} and {@code :limit} that answers its update count. */
	public static final class Counted extends CleanupSql {

		Counted(String sql) {
			super(sql);
		}

	}

	/**
	 * A statement of {@code :from}, {@code :now} and {@code :limit} that deletes the
	 * records expired by {@code :now} from {@code :from} on and answers one row: how many
	 * it deleted, and the latest {@code expires_at} among them ({@code NULL} when none).
	 */
	public static final class FromCursor extends CleanupSql {

		FromCursor(String sql) {
			super(sql);
		}

	}

}
