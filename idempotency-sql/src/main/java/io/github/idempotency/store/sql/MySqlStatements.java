package io.github.idempotency.store.sql;

import java.time.Duration;

/**
 * MySQL: a plain {@code INSERT}, a duplicate key (1062) meaning the row exists — never
 * {@code INSERT IGNORE}, which would hide other errors too; a statement's failure does not
 * abort the transaction here. Waits are bounded by the server's
 * {@code innodb_lock_wait_timeout} and the executor's query timeout; lock errors are 1205,
 * 3572 and deadlocks (1213). A claim that finds the row reads it in a statement of its own;
 * a batch is one read of the rows that exist and one insert of the others; its completion
 * the single completions, sent together.
 */
sealed class MySqlStatements extends SqlStatements permits MariaDbStatements {

	MySqlStatements(String table, Duration lockTimeout) {
		super(table, lockTimeout);
	}

	@Override
	public String insert() {
		return sql("INSERT INTO {table} ({columns}) VALUES ({parameters})");
	}

	@Override
	public ClaimSql claim() {
		return new ClaimSql.InsertThenRead();
	}

	@Override
	public BatchClaimSql batchClaim() {
		return new BatchClaimSql.ReadThenInsert(selectAll(), insertAll());
	}

	@Override
	public BatchCompletionSql batchCompletion() {
		return new BatchCompletionSql.OneByOne();
	}

	/** A locking read: InnoDB answers it from the latest committed row, not the snapshot. */
	@Override
	public final String selectCommitted() {
		return super.selectCommitted() + " LOCK IN SHARE MODE";
	}

	@Override
	public final String deleteExpired() {
		return sql("DELETE FROM {table} WHERE expires_at <= :now LIMIT :limit");
	}

	@Override
	public final boolean isLockFailure(String sqlState, int errorCode) {
		return errorCode == 1205 || errorCode == 3572 || errorCode == 1213;
	}

}
