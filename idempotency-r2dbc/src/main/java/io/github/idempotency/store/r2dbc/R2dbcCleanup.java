package io.github.idempotency.store.r2dbc;

import java.util.Map;

import reactor.core.publisher.Mono;

import io.github.idempotency.store.sql.CleanupSql;
import reactor.util.retry.Retry;

import io.github.idempotency.store.RecordId;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * Deletes records: one by its id, or every expired one, a batch per statement.
 */
final class R2dbcCleanup {

	private final R2dbcRecordTable table;

	private final R2dbcStatement delete;

	private final R2dbcStatement deleteExpired;

	/** Whether a batch starts where the last one ended on the {@code expires_at} index (PostgreSQL's). */
	private final boolean fromCursor;

	R2dbcCleanup(R2dbcRecordTable table) {
		this.table = table;
		this.delete = new R2dbcStatement(table.statements().delete());
		CleanupSql cleanup = table.statements().cleanup();
		this.deleteExpired = new R2dbcStatement(cleanup.sql());
		this.fromCursor = cleanup instanceof CleanupSql.FromCursor;
	}

	Mono<Boolean> delete(RecordId id) {
		return this.delete.on(this.table.client(), R2dbcRows.ids(id)).fetch().rowsUpdated().map((count) -> count == 1);
	}

	/**
	 * Deletes expired records, at most {@code batchSize} per statement, until none is left.
	 * @return how many records were deleted
	 */
	Mono<Long> deleteExpired(int batchSize) {
		return Mono.defer(() -> {
			long now = this.table.now().toEpochMilli();
			return deleteExpiredBatch(now, batchSize, Long.MIN_VALUE)
				.expand((batch) -> (batch.deleted() >= batchSize) ? deleteExpiredBatch(now, batchSize, batch.next())
						: Mono.empty())
				.reduce(0L, (total, batch) -> total + batch.deleted());
		});
	}

	/**
	 * One batch, tried again when it lost a deadlock or a lock wait to the claims it races:
	 * the cleanup yields, and carries on rather than wait for its next interval.
	 */
	private Mono<Batch> deleteExpiredBatch(long now, int batchSize, long from) {
		return Mono.defer(() -> {
			if (!this.fromCursor) {
				return this.deleteExpired.on(this.table.client(), Map.of("now", now, "limit", batchSize))
					.fetch()
					.rowsUpdated()
					.map((deleted) -> new Batch(deleted, from));
			}
			return this.deleteExpired.on(this.table.client(), Map.of("from", from, "now", now, "limit", batchSize))
				.map((row) -> {
					Number latest = row.get(1, Number.class);
					Number deleted = row.get(0, Number.class);
					return new Batch((deleted != null) ? deleted.longValue() : 0L,
							(latest != null) ? latest.longValue() : from);
				})
				.one();
		})
			.retryWhen(Retry.max(2)
				.filter((ex) -> ex instanceof DataAccessException access
						&& (this.table.isLockFailure(access) || access instanceof ConcurrencyFailureException))
				.onRetryExhaustedThrow((spec, signal) -> signal.failure()));
	}

	/**
	 * A batch's outcome.
	 * @param deleted how many rows it deleted
	 * @param next where the next batch starts on the {@code expires_at} index
	 */
	private record Batch(long deleted, long next) {
	}

}
