package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.CleanupSql;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * Deletes records: one by its id, or every expired one, in batches along the
 * {@code expires_at} index, paced ({@link CleanupPace}). On PostgreSQL and MariaDB a batch
 * skips the rows another transaction holds (another instance's batch, a takeover), so
 * that two instances never wait for each other nor delete the same row.
 */
final class JdbcCleanup {

	private final JdbcRecordTable table;

	private final String delete;

	private final CleanupSql deleteExpired;

	private final CleanupTime time;

	JdbcCleanup(JdbcRecordTable table, CleanupTime time) {
		this.table = table;
		this.delete = table.statements().delete();
		this.deleteExpired = table.statements().cleanup();
		this.time = time;
	}

	boolean delete(RecordId id) {
		return this.table.bounded()
			.sql(this.delete)
			.param("workflow", id.workflow())
			.param("key", id.key())
			.update() == 1;
	}

	/**
	 * Deletes the records expired now, a batch per statement, pausing after each batch as
	 * {@code pace} says, until a batch finds fewer rows than it may delete; an interrupt
	 * during a pause ends the run (the thread stays interrupted).
	 * @return how many records were deleted
	 */
	int deleteExpired(CleanupPace pace) {
		long now = this.table.now().toEpochMilli();
		int total = 0;
		Batch batch = new Batch(0, Long.MIN_VALUE);
		while (true) {
			long start = this.time.nanoTime();
			batch = deleteExpiredBatch(now, pace.batchSize(), batch.next());
			long nanos = this.time.nanoTime() - start;
			total += batch.deleted();
			if (batch.deleted() < pace.batchSize()) {
				return total;
			}
			long pause = pace.pauseAfter(batch.deleted(), nanos);
			if (pause > 0) {
				try {
					this.time.sleep(pause);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return total;
				}
			}
		}
	}

	/**
	 * One batch, tried again when it lost a deadlock or a lock wait to the claims it races
	 * (a database whose delete waits for the rows it meets): the cleanup yields, and
	 * carries on rather than wait for its next interval.
	 */
	private Batch deleteExpiredBatch(long now, int batchSize, long from) {
		for (int attempt = 1;; attempt++) {
			try {
				if (this.deleteExpired instanceof CleanupSql.FromCursor cursor) {
					return this.table.bounded()
						.sql(cursor.sql())
						.param("from", from)
						.param("now", now)
						.param("limit", batchSize)
						.query((rs, row) -> {
							long latest = rs.getLong(2);
							return new Batch(rs.getInt(1), rs.wasNull() ? from : latest);
						})
						.single();
				}
				return new Batch(this.table.bounded()
					.sql(this.deleteExpired.sql())
					.param("now", now)
					.param("limit", batchSize)
					.update(), from);
			}
			catch (DataAccessException ex) {
				if (attempt >= 3 || !(this.table.isLockFailure(ex) || ex instanceof ConcurrencyFailureException)) {
					throw ex;
				}
			}
		}
	}

	/**
	 * A batch's outcome.
	 * @param deleted how many rows it deleted
	 * @param next where the next batch starts on the {@code expires_at} index: the latest
	 * expiry deleted (rows of that same expiry may be left)
	 */
	private record Batch(int deleted, long next) {
	}

}
