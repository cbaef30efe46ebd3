package io.github.idempotency.store.r2dbc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

import io.r2dbc.spi.ConnectionFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.util.Assert;

/**
 * A non-blocking store in the {@code jdbc} store's table (same schema scripts, same
 * statements), reached through R2DBC: PostgreSQL ({@code r2dbc-postgresql}) or MariaDB
 * ({@code r2dbc-mariadb}). Each step is a {@code Mono} that does nothing until subscribed
 * and holds no thread while the database answers.
 * <p>
 * <b>Outside a transaction</b> a claim is held by its lease, with the jdbc store's answers:
 * a first delivery's claim is one statement; a duplicate is answered from the row the claim
 * found (in the claim's own statement where the database can); a takeover of an expired
 * claim locks its row ({@code SELECT ... FOR UPDATE NOWAIT}) and updates it in one short
 * transaction; every other step is one statement fenced by the claim's owner.
 * <p>
 * <b>Inside the caller's reactive transaction</b> on this {@code ConnectionFactory} (an
 * {@code R2dbcTransactionManager} transaction, from {@code TransactionalOperator} or a
 * {@code @Transactional} method returning a {@code Mono}, found in the Reactor context the
 * claim is subscribed with) the claim joins it, as the jdbc store's claim joins a JDBC
 * transaction: its handle {@link ReactiveClaimHandle#joinsTransaction() joins the
 * transaction}, the record is written already {@code COMPLETED} and commits or rolls back
 * with the caller's writes, and a concurrent duplicate waits on the uncommitted row (up to
 * the lock timeout) and then sees the committed result. Such a claim never waits for
 * another run's row: it fails at once, retryable. A read-only transaction cannot hold a
 * claim ({@code IllegalStateException}).
 * <p>
 * <b>Read first.</b> Outside a transaction a claim may first read the row
 * ({@link #setReadFirst}; by default per workflow while most of its claims find a record).
 * <p>
 * Times come from the given {@link Clock} as epoch milliseconds, never from the database.
 */
public final class R2dbcIdempotencyStore implements ReactiveIdempotencyStore {

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

	private final R2dbcRecordTable table;

	private final R2dbcTransactions transactions;

	private final R2dbcClaims claims;

	private final R2dbcBatchClaims batchClaims;

	private final R2dbcBatchCompletions batchCompletions;

	private final R2dbcCleanup cleanup;

	private volatile ReadFirst readFirst = ReadFirst.ADAPTIVE;

	/**
	 * A store on {@code connectionFactory}'s table {@code tableName}.
	 * @param connectionFactory the application's connection factory, on PostgreSQL or MariaDB
	 * @param tableName the table (see the {@code schema-*.sql} files of the jdbc store, in
	 * {@code io/github/idempotency/store/jdbc/})
	 * @param lockTimeout how long a claim waits for a row another transaction holds
	 * @param clock the clock leases and retention are measured with
	 * @throws IllegalStateException for a database the store does not support
	 */
	public R2dbcIdempotencyStore(ConnectionFactory connectionFactory, String tableName, Duration lockTimeout,
			Clock clock) {
		this(connectionFactory, tableName, lockTimeout, clock, System::nanoTime, Schedulers.parallel());
	}

	R2dbcIdempotencyStore(ConnectionFactory connectionFactory, String tableName, Duration lockTimeout, Clock clock,
			LongSupplier cleanupNanoTime, Scheduler cleanupDelays) {
		Assert.isTrue(TABLE_NAME.matcher(tableName).matches(), () -> "Invalid table name '" + tableName + "'");
		String product = connectionFactory.getMetadata().getName();
		String name = product.toLowerCase(Locale.ROOT);
		Assert.state(name.contains("postgres") || name.contains("mariadb") || name.contains("h2"),
				() -> "The r2dbc idempotency store supports PostgreSQL, MariaDB and H2, not " + product);
		this.table = new R2dbcRecordTable(DatabaseClient.create(connectionFactory),
				SqlStatements.of(product, tableName, lockTimeout), clock);
		this.transactions = new R2dbcTransactions(connectionFactory);
		this.claims = new R2dbcClaims(this.table, this.transactions, () -> this.readFirst);
		this.batchClaims = new R2dbcBatchClaims(this.table, this.claims);
		this.batchCompletions = new R2dbcBatchCompletions(this.table, this.transactions);
		this.cleanup = new R2dbcCleanup(this.table, cleanupNanoTime, cleanupDelays);
	}

	/**
	 * Sets whether a claim outside a transaction reads the record before its claim
	 * statement ({@link ReadFirst#ADAPTIVE} by default).
	 * @param readFirst never, per workflow by the share of duplicates, or always
	 */
	public void setReadFirst(ReadFirst readFirst) {
		Assert.notNull(readFirst, "'readFirst' must not be null");
		this.readFirst = readFirst;
	}

	@Override
	public Mono<ReactiveClaimResult> claim(ClaimRequest request) {
		return this.transactions.isInTransaction().flatMap((inTransaction) -> this.claims.claim(request, inTransaction));
	}

	/**
	 * Claims the batch in one statement on PostgreSQL and on MariaDB outside a transaction,
	 * in two on MariaDB inside one; what those cannot decide is claimed one by one.
	 */
	@Override
	public Mono<List<ReactiveClaimResult>> claimAll(List<ClaimRequest> requests) {
		if (requests.isEmpty()) {
			return Mono.just(List.of());
		}
		return this.transactions.isInTransaction()
			.flatMap((inTransaction) -> this.batchClaims.claimAll(requests, inTransaction));
	}

	/**
	 * Completes the batch in one round trip when every handle is a claim of this store of
	 * one kind (held by its lease, or by the caller's transaction), otherwise one after the
	 * other.
	 */
	@Override
	public Mono<List<Boolean>> completeAll(List<ReactiveClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		return Mono.defer(() -> {
			Mono<List<Boolean>> completed = this.batchCompletions.completeAll(handles, responses);
			return (completed != null) ? completed : ReactiveIdempotencyStore.super.completeAll(handles, responses);
		});
	}

	@Override
	public Mono<IdempotencyRecord> find(RecordId id) {
		return this.table.rows().read(id).filter((record) -> !record.isExpired(this.table.now()));
	}

	@Override
	public Mono<Boolean> delete(RecordId id) {
		return this.cleanup.delete(id);
	}

	@Override
	public String backend() {
		return "r2dbc";
	}

	/**
	 * Deletes expired records, at most {@code batchSize} per statement, until none is left.
	 * Safe to run on several instances at once. A live {@code IN_PROGRESS} record never
	 * expires: its expiry is its lease plus the retention.
	 * @param batchSize the most rows one statement deletes
	 * @return how many records were deleted
	 */
	public Mono<Long> deleteExpired(int batchSize) {
		return deleteExpired(CleanupPace.unpaced(batchSize));
	}

	/**
	 * Deletes expired records as {@link #deleteExpired(int)} does, at {@code pace}: after
	 * each batch a pause, so that the run keeps the database busy at most the pace's duty
	 * cycle of the time and deletes at most its rows per second (a delay on Reactor's
	 * parallel scheduler; no thread waits). Cancelling the run ends it.
	 * @param pace the batch size and the pauses
	 * @return how many records were deleted
	 */
	public Mono<Long> deleteExpired(CleanupPace pace) {
		Assert.notNull(pace, "'pace' must not be null");
		return this.cleanup.deleteExpired(pace);
	}

}
