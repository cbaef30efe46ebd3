package io.github.idempotency.store.r2dbc;

import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import io.github.idempotency.store.sql.CleanupSql;
import reactor.util.retry.Retry;

import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.RecordId;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * Deletes records: one by its id, or every expired one, a batch per statement, paced as
 * the jdbc store's cleanup is ({@link CleanupPace}): each batch is timed on a monotonic
 * clock ({@code System.nanoTime}: a wall clock that jumps would stretch or cancel the
 * pauses), and the pause after it is a delay on {@code delays} (Reactor's parallel
 * scheduler): no thread waits.
 */
final class R2dbcCleanup {

	private final R2dbcRecordTable table;

	private final R2dbcStatement delete;

	private final R2dbcStatement deleteExpired;

	/** Whether a batch starts where the last one ended on the {@code expires_at} index (PostgreSQL's). */
	private final boolean fromCursor;

	/** What times the batches, in nanoseconds. */
	private final LongSupplier nanoTime;

	/** What waits out the pauses. */
	private final Scheduler delays;

	R2dbcCleanup(R2dbcRecordTable table, LongSupplier nanoTime, Scheduler delays) {
		this.table = table;
		this.nanoTime = nanoTime;
		this.delays = delays;
		this.delete = new R2dbcStatement(table.statements().delete());
		CleanupSql cleanup = table.statements().cleanup();
		this.deleteExpired = new R2dbcStatement(cleanup.sql());
		this.fromCursor = cleanup instanceof CleanupSql.FromCursor;
	}

	Mono<Boolean> delete(RecordId id) {
		return this.delete.on(this.table.client(), R2dbcRows.ids(id)).fetch().rowsUpdated().map((count) -> count == 1);
	}

	/**
	 * Deletes the records expired now, a batch per statement, pausing after each batch as
	 * {@code pace} says, until a batch finds fewer rows than it may delete. Cancelling it
	 * ends the run (between batches or during one, which then commits or rolls back whole).
	 * @return how many records were deleted
	 */
	Mono<Long> deleteExpired(CleanupPace pace) {
		return Mono.defer(() -> {
			long now = this.table.now().toEpochMilli();
			return timedBatch(now, pace.batchSize(), Long.MIN_VALUE)
				.expand((batch) -> (batch.deleted() < pace.batchSize()) ? Mono.empty()
						: pause(pace.pauseAfter(batch.deleted(), batch.nanos()))
							.then(timedBatch(now, pace.batchSize(), batch.next())))
				.reduce(0L, (total, batch) -> total + batch.deleted());
		});
	}

	private Mono<Batch> timedBatch(long now, int batchSize, long from) {
		return Mono.defer(() -> {
			long start = this.nanoTime.getAsLong();
			return deleteExpiredBatch(now, batchSize, from)
				.map((batch) -> new Batch(batch.deleted(), batch.next(), this.nanoTime.getAsLong() - start));
		});
	}

	private Mono<Void> pause(long nanos) {
		return (nanos > 0) ? Mono.delay(Duration.ofNanos(nanos), this.delays).then() : Mono.empty();
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
					.map((deleted) -> new Batch(deleted, from, 0));
			}
			return this.deleteExpired.on(this.table.client(), Map.of("from", from, "now", now, "limit", batchSize))
				.map((row) -> {
					Number latest = row.get(1, Number.class);
					Number deleted = row.get(0, Number.class);
					return new Batch((deleted != null) ? deleted.longValue() : 0L,
							(latest != null) ? latest.longValue() : from, 0);
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
	 * @param nanos how long it took
	 */
	private record Batch(long deleted, long next, long nanos) {
	}

}
