package io.github.idempotency.store.r2dbc;

import java.util.Map;

import reactor.core.publisher.Mono;
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

	R2dbcCleanup(R2dbcRecordTable table) {
		this.table = table;
		this.delete = new R2dbcStatement(table.statements().delete());
		this.deleteExpired = new R2dbcStatement(table.statements().deleteExpired());
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
			return deleteExpiredBatch(now, batchSize)
				.expand((deleted) -> (deleted >= batchSize) ? deleteExpiredBatch(now, batchSize) : Mono.empty())
				.reduce(0L, Long::sum);
		});
	}

	/**
	 * One batch, tried again when it lost a deadlock or a lock wait to the claims it races:
	 * the cleanup yields, and carries on rather than wait for its next interval.
	 */
	private Mono<Long> deleteExpiredBatch(long now, int batchSize) {
		return Mono.defer(() -> this.deleteExpired.on(this.table.client(), Map.of("now", now, "limit", batchSize))
			.fetch()
			.rowsUpdated())
			.retryWhen(Retry.max(2)
				.filter((ex) -> ex instanceof DataAccessException access
						&& (this.table.isLockFailure(access) || access instanceof ConcurrencyFailureException))
				.onRetryExhaustedThrow((spec, signal) -> signal.failure()));
	}

}
