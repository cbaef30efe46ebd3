package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.RecordId;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * Deletes records: one by its id, or every expired one, a batch per statement.
 */
final class JdbcCleanup {

	private final JdbcRecordTable table;

	private final String delete;

	private final String deleteExpired;

	JdbcCleanup(JdbcRecordTable table) {
		this.table = table;
		this.delete = table.statements().delete();
		this.deleteExpired = table.statements().deleteExpired();
	}

	boolean delete(RecordId id) {
		return this.table.bounded()
			.sql(this.delete)
			.param("workflow", id.workflow())
			.param("key", id.key())
			.update() == 1;
	}

	/**
	 * Deletes expired records, at most {@code batchSize} per statement, until none is left.
	 * @return how many records were deleted
	 */
	int deleteExpired(int batchSize) {
		long now = this.table.now().toEpochMilli();
		int total = 0;
		int deleted;
		do {
			deleted = deleteExpiredBatch(now, batchSize);
			total += deleted;
		}
		while (deleted >= batchSize);
		return total;
	}

	/**
	 * One batch, tried again when it lost a deadlock or a lock wait to the claims it races
	 * (MariaDB's delete walks the expiry index while a claim locks the row first): the
	 * cleanup yields, and carries on rather than wait for its next interval.
	 */
	private int deleteExpiredBatch(long now, int batchSize) {
		for (int attempt = 1;; attempt++) {
			try {
				return this.table.bounded().sql(this.deleteExpired).param("now", now).param("limit", batchSize).update();
			}
			catch (DataAccessException ex) {
				if (attempt >= 3 || !(this.table.isLockFailure(ex) || ex instanceof ConcurrencyFailureException)) {
					throw ex;
				}
			}
		}
	}

}
