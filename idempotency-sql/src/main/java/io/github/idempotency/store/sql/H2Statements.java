package io.github.idempotency.store.sql;

import java.time.Duration;

/**
 * H2: a plain {@code INSERT}, a duplicate key meaning the row exists; waits are bounded by
 * H2's {@code LOCK_TIMEOUT} and the executor's query timeout; lock errors are 50200. A
 * claim that finds the row reads it in a statement of its own; a batch is one read of the
 * rows that exist and one insert of the others; its completion the single completions,
 * sent together.
 */
final class H2Statements extends SqlStatements {

	H2Statements(String table, Duration lockTimeout) {
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

	@Override
	public String deleteExpired() {
		return sql("DELETE FROM {table} WHERE expires_at <= :now FETCH FIRST :limit ROWS ONLY");
	}

	@Override
	public boolean isLockFailure(String sqlState, int errorCode) {
		return errorCode == 50200;
	}

}
