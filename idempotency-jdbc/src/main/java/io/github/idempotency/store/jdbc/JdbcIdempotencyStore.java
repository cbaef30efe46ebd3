package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

/**
 * A store in one database table, on {@code JdbcClient}: PostgreSQL, MariaDB/MySQL and H2.
 * <p>
 * A claim inserts the record atomically (PostgreSQL {@code ON CONFLICT DO NOTHING}, a
 * duplicate-key error elsewhere): a first delivery's claim is that one statement. On
 * PostgreSQL the same statement reads the row first and inserts only when it found none,
 * so a duplicate is one statement too, about a primary-key read (but for a workflow whose
 * claims are nearly all new: the plain insert, the row read only when it exists; see
 * {@link ReadFirst}); on MariaDB outside the caller's transaction the insert's own
 * statement answers the row; elsewhere the row is read only when it existed (a duplicate
 * costs two statements). Finished records and live leases are answered from that read; a takeover
 * candidate is locked with
 * {@code SELECT ... FOR UPDATE NOWAIT} and taken over by an update, in one short
 * transaction. A lock held by
 * another transaction (or a lock wait longer than the lock timeout) means the key is in
 * progress. Every other step is one fenced statement.
 * <p>
 * <b>Transactions.</b> When an actual Spring transaction runs on this store's
 * {@link DataSource} (a {@code DataSourceTransactionManager} or {@code JpaTransactionManager}
 * transaction: a bound connection with auto-commit off), the claim joins it and is
 * finished in it ({@link TransactionalJdbcClaim}): the record commits or rolls back with
 * the business writes, and a concurrent duplicate waits on the uncommitted row (up to the
 * lock timeout) and then sees the committed result. Such a claim needs no lease renewal —
 * the transaction is the in-progress marker — and writes its record already
 * {@code COMPLETED}, so that a {@code void} operation's whole cost is the claim's one
 * insert. Without a transaction ({@code SUPPORTS}, {@code NOT_SUPPORTED}, another
 * resource's transaction) the claim is held by its lease ({@link LeasedJdbcClaim}) and
 * every statement auto-commits, but for a takeover's lock and update, whatever the pool's
 * default ({@link AutoCommitConnections}). A read-only
 * transaction on this store's data source cannot hold a claim: the claim throws
 * {@code IllegalStateException} (the engine never runs such a call unprotected).
 * <p>
 * <b>Read first.</b> Outside a transaction a claim may first read the row with a plain
 * primary-key {@code SELECT} ({@link #setReadFirst}; by default per workflow while most of
 * its claims find a record): a finished record, a mismatch or a live claim is then answered
 * by that read alone, and anything else (no row, an expired lease or retention) goes on to
 * the claim statement, which decides again atomically. Inside the caller's transaction the
 * claim never reads first.
 * <p>
 * Times come from the given {@link Clock} as epoch milliseconds, never from the database.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

	private final AutoCommitConnections dataSource;

	private final JdbcRecordTable table;

	private final TransactionTemplate transactions;

	private final JdbcBatchSteps batches;

	private final ReadFirst.Choices readFirstRatios = new ReadFirst.Choices();

	private volatile ReadFirst readFirst = ReadFirst.ADAPTIVE;

	/**
	 * A store on {@code dataSource}'s table {@code tableName}.
	 * @param dataSource the application's data source (a
	 * {@link TransactionAwareDataSourceProxy} is used through its target)
	 * @param tableName the table (see the {@code schema-*.sql} files beside this class)
	 * @param lockTimeout how long a claim waits for a row another transaction holds
	 * @param clock the clock leases and retention are measured with
	 */
	public JdbcIdempotencyStore(DataSource dataSource, String tableName, Duration lockTimeout, Clock clock) {
		Assert.isTrue(TABLE_NAME.matcher(tableName).matches(), () -> "Invalid table name '" + tableName + "'");
		this.dataSource = new AutoCommitConnections(transactionsResource(dataSource));
		this.table = new JdbcRecordTable(this.dataSource, JdbcDialect.of(this.dataSource), tableName, lockTimeout,
				clock);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		this.batches = new JdbcBatchSteps(this, this.table);
	}

	/**
	 * The data source a transaction binds its connection to: a
	 * {@link TransactionAwareDataSourceProxy}'s target, as Spring's transaction managers
	 * take it. The proxy hands out that transaction's connection, so a store that looked
	 * for the transaction under the proxy would not see it, and would hold its claims by a
	 * lease inside it.
	 */
	private static DataSource transactionsResource(DataSource dataSource) {
		if (dataSource instanceof TransactionAwareDataSourceProxy proxy) {
			DataSource target = proxy.getTargetDataSource();
			Assert.notNull(target, "The TransactionAwareDataSourceProxy has no target data source");
			return target;
		}
		return dataSource;
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
	public ClaimResult claim(ClaimRequest request) {
		return claim(this.table, request, isInTransaction());
	}

	/**
	 * Claims the batch in one statement on PostgreSQL, in two on the other databases; see
	 * {@link JdbcBatchSteps}.
	 */
	@Override
	public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		boolean inTransaction = isInTransaction();
		if (requests.isEmpty()) {
			return IdempotencyStore.super.claimAll(requests);
		}
		return this.batches.claimAll(requests, inTransaction);
	}

	/**
	 * Completes the batch in one round trip when every handle is a claim of this store of
	 * one kind (see {@link JdbcBatchSteps}), otherwise one after the other.
	 */
	@Override
	public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		List<Boolean> completed = this.batches.completeAll(handles, responses);
		return (completed != null) ? completed : IdempotencyStore.super.completeAll(handles, responses);
	}

	/**
	 * Insert (one statement: a first claim ends here); else read — in the insert's own
	 * statement on PostgreSQL, unless the key is most likely new, and on MariaDB — (a
	 * duplicate, a failure, a mismatch or a live lease ends here); else, for a takeover,
	 * lock and update in one
	 * short transaction (or the caller's). Inside the caller's transaction the claimed
	 * record is written already {@code COMPLETED} (see {@link TransactionalJdbcClaim}).
	 */
	ClaimResult claim(JdbcRecordTable table, ClaimRequest request, boolean inTransaction) {
		try {
			ClaimResult claim = claimNow(table, request, inTransaction);
			if (inTransaction && claim.outcome() == ClaimOutcome.IN_PROGRESS) {
				throw cannotWaitInTransaction(request, null);
			}
			return claim;
		}
		catch (DataAccessException ex) {
			if (inTransaction && (isLockFailure(ex) || ex instanceof ConcurrencyFailureException)) {
				throw cannotWaitInTransaction(request, ex);
			}
			if (isLockFailure(ex)) {
				return ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(table, request));
			}
			throw ex;
		}
	}

	/**
	 * Runs {@code work} in one transaction on the store's {@code DataSource}: the caller's,
	 * when one is active there, else a transaction of its own, committed once.
	 */
	<T> T inTransaction(TransactionCallback<T> work) {
		T result = this.transactions.execute(work);
		Assert.state(result != null, "No result");
		return result;
	}

	/**
	 * Whether a claim of {@code workflow} inserts first now, rather than use a
	 * one-statement claim (see {@link ReadFirst}), inside the caller's transaction too.
	 */
	boolean insertsFirst(String workflow) {
		return this.readFirstRatios.insertsFirst(this.readFirst, workflow);
	}

	/**
	 * Whether a claim of {@code workflow} outside a transaction reads the record first now
	 * (see {@link ReadFirst}).
	 */
	boolean readsFirst(String workflow) {
		return this.readFirstRatios.readsFirst(this.readFirst, workflow);
	}

	/**
	 * Counts a claim of {@code workflow} for {@link ReadFirst#ADAPTIVE}.
	 * @param answered whether it found a record it answered without writing
	 */
	void recordClaim(String workflow, boolean answered) {
		this.readFirstRatios.record(this.readFirst, workflow, answered);
	}

	private ClaimResult claimNow(JdbcRecordTable table, ClaimRequest request, boolean inTransaction) {
		String workflow = request.id().workflow();
		ReadFirst mode = this.readFirst;
		boolean likelyNew = this.readFirstRatios.insertsFirst(mode, workflow);
		if (!inTransaction && this.readFirstRatios.readsFirst(mode, workflow)) {
			// a plain primary-key read: never waits, and answers a finished record or a live claim alone
			IdempotencyRecord existing = table.readFinished(request.id());
			if (existing != null) {
				ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), table.now());
				if (outcome != ClaimOutcome.ACQUIRED) {
					this.readFirstRatios.record(mode, workflow, true);
					return ClaimResult.of(outcome, existing);
				}
			}
			// no row a moment ago: the insert alone most likely claims it
			likelyNew = existing == null;
		}
		ClaimResult claim = claimByStatement(table, request, inTransaction, likelyNew);
		this.readFirstRatios.record(mode, workflow, claim.outcome() != ClaimOutcome.ACQUIRED);
		return claim;
	}

	private ClaimResult claimByStatement(JdbcRecordTable table, ClaimRequest request, boolean inTransaction,
			boolean likelyNew) {
		Instant now = table.now();
		IdempotencyRecord claimed = claimed(null, request, now, inTransaction);
		JdbcRecordTable.Insertion insertion = table.insertOrRead(claimed, inTransaction, likelyNew);
		if (insertion.inserted()) {
			return acquiredAfterInsert(table, acquired(table, claimed, request, inTransaction), request, inTransaction,
					now);
		}
		// the insert may have waited on another transaction's row: decide on the time now
		now = table.now();
		IdempotencyRecord existing = insertion.existing();
		if (existing == null) {
			// released between the insert and the read: the key is free again
			claimed = claimed(null, request, now, inTransaction);
			return table.insert(claimed, inTransaction)
					? acquiredAfterInsert(table, acquired(table, claimed, request, inTransaction), request,
							inTransaction, now)
					: ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(table, request));
		}
		ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), now);
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, existing);
		}
		Instant decidedAt = now;
		ClaimResult takeover = inTransaction ? takeOver(table, request, now, true)
				: this.transactions.execute((status) -> takeOver(table, request, decidedAt, false));
		Assert.state(takeover != null, "No claim result");
		return takeover;
	}

	/**
	 * An inserted claim, {@code acquired} as {@link #acquired} answered it. Its lease was
	 * stamped before the insert, which may have waited up to the lock timeout behind
	 * another transaction's row: a lease that lost a third of its length meanwhile is
	 * stamped again (fenced, so a run that took the key over in between wins and this
	 * claim answers in progress).
	 */
	ClaimResult acquiredAfterInsert(JdbcRecordTable table, ClaimResult acquired, ClaimRequest request,
			boolean inTransaction, Instant stampedAt) {
		if (inTransaction || !lostAThird(Duration.between(stampedAt, table.now()), request.leaseTtl())) {
			return acquired;
		}
		if (!acquired.acquiredHandle().renew()) {
			IdempotencyRecord current = table.read(request.id());
			return ClaimResult.of(ClaimOutcome.IN_PROGRESS, (current != null) ? current : acquired.record());
		}
		IdempotencyRecord renewed = table.read(request.id());
		return (renewed != null) ? ClaimResult.acquired(renewed, acquired.acquiredHandle()) : acquired;
	}

	/**
	 * Whether {@code elapsed} is more than a third of {@code leaseTtl}, counted exactly as
	 * three times {@code elapsed} against {@code leaseTtl} ({@code Duration.dividedBy} goes
	 * through {@code BigDecimal}, once for every claim of a batch).
	 */
	private static boolean lostAThird(Duration elapsed, Duration leaseTtl) {
		return Duration.ofSeconds(3 * elapsed.getSeconds(), 3L * elapsed.getNano()).compareTo(leaseTtl) > 0;
	}

	/**
	 * Inside the caller's transaction a claim never waits for another run: the
	 * transaction may be aborted (PostgreSQL after a lock error, MariaDB after a deadlock)
	 * and holds what it read and locked. The call fails at once, retryable.
	 */
	static IdempotencyInProgressException cannotWaitInTransaction(ClaimRequest request,
			@Nullable Exception cause) {
		return new IdempotencyInProgressException("The idempotency key of '" + request.id().workflow()
				+ "' is held by another run; inside the caller's transaction the claim cannot wait for it, "
				+ "so the call fails to be retried", cause);
	}

	private ClaimResult takeOver(JdbcRecordTable table, ClaimRequest request, Instant now, boolean inTransaction) {
		IdempotencyRecord locked = table.readForUpdate(request.id());
		if (locked == null) {
			return ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(table, request));
		}
		ClaimOutcome outcome = ClaimRules.decide(locked, request.fingerprint(), now);
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, locked);
		}
		IdempotencyRecord takeover = claimed(locked, request, now, inTransaction);
		table.takeOver(takeover);
		return acquired(table, takeover, request, inTransaction);
	}

	ClaimResult acquired(JdbcRecordTable table, IdempotencyRecord claimed, ClaimRequest request,
			boolean inTransaction) {
		return ClaimResult.acquired(claimed, inTransaction ? new TransactionalJdbcClaim(this, table, request)
				: new LeasedJdbcClaim(table, request));
	}

	/**
	 * The record a claim writes: as {@link ClaimRules#claimed} says; inside the caller's
	 * transaction already {@code COMPLETED}, with no lease but kept as long as a leased
	 * claim (the lease's length + retention), so that a completion within that length
	 * changes no indexed column, as outside a transaction.
	 */
	static IdempotencyRecord claimed(@Nullable IdempotencyRecord existing, ClaimRequest request, Instant now,
			boolean inTransaction) {
		IdempotencyRecord claimed = ClaimRules.claimed(existing, request, now);
		if (!inTransaction) {
			return claimed;
		}
		return new IdempotencyRecord(claimed.id(), RecordStatus.COMPLETED, claimed.fingerprint(), claimed.owner(),
				claimed.attempt(), now, claimed.recoveryPoint(), null, null, null, claimed.createdAt(), now,
				claimed.expiresAt());
	}

	/**
	 * Whether an actual transaction runs on this store's data source: a connection bound
	 * to the thread (by a {@code DataSourceTransactionManager} or a
	 * {@code JpaTransactionManager}) with auto-commit off. A connection bound without a
	 * transaction ({@code SUPPORTS}, {@code NOT_SUPPORTED}, or another resource's
	 * transaction) does not count: there every statement commits at once, also on a
	 * connection bound without a transaction that did not auto-commit
	 * ({@link AutoCommitConnections#autoCommitBoundConnection}). Under JTA no connection is
	 * bound before the first statement: there the connection the claim takes is asked, and
	 * one that the pool enlisted in the transaction refuses auto-commit (see
	 * {@link #joinsWithoutBinding()}).
	 * @throws IllegalStateException when that transaction is read-only: the claim would
	 * have to write in it
	 */
	boolean isInTransaction() {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			this.dataSource.autoCommitBoundConnection();
			return false;
		}
		boolean inTransaction;
		try {
			inTransaction = (TransactionSynchronizationManager.getResource(this.dataSource) instanceof ConnectionHolder holder)
					? !holder.getConnection().getAutoCommit() : joinsWithoutBinding();
		}
		catch (SQLException ex) {
			throw new DataAccessResourceFailureException("Cannot tell whether a transaction is active", ex);
		}
		// refused on every database alike: PostgreSQL and MariaDB reject the write, H2 would
		// take it, and a routing data source may have sent the transaction to a replica
		Assert.state(!inTransaction || !TransactionSynchronizationManager.isCurrentTransactionReadOnly(),
				"An idempotent operation cannot run in a read-only transaction: the jdbc store writes its record in "
						+ "the caller's transaction. Remove readOnly = true from the transaction around it");
		return inTransaction;
	}

	/**
	 * Whether the connection the claim takes, with none bound by a transaction of this
	 * data source, is part of the actual transaction all the same: one that a pool enlisted
	 * in a JTA transaction, which refuses to switch to auto-commit. Any other connection is
	 * switched to auto-commit, so that the claim commits at once, as a claim inside another
	 * resource's transaction does. The connection stays bound to the transaction, as the
	 * claim's statement would bind it.
	 */
	private boolean joinsWithoutBinding() throws SQLException {
		Connection connection = DataSourceUtils.getConnection(this.dataSource);
		try {
			return !connection.getAutoCommit();
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.dataSource);
		}
	}

	/**
	 * Stores a permanent failure as a claim and its failure, in the transaction
	 * {@code table} runs in, unless another run holds or finished the key meanwhile.
	 */
	void recordFailure(JdbcRecordTable table, ClaimRequest request, Throwable failure) {
		try {
			if (claimNow(table, request, true).outcome() == ClaimOutcome.ACQUIRED) {
				table.fail(request.id(), request.owner(), failure, request.retention(),
						JdbcRecordTable.Fence.TRANSACTION);
			}
		}
		catch (DataAccessException ex) {
			if (!isLockFailure(ex)) {
				throw ex;
			}
			// another run holds the key: its outcome stands
		}
	}

	/**
	 * {@link #recordFailure} in a transaction of its own on a connection of its own, apart
	 * from whatever the thread has bound (a transaction that just completed).
	 */
	void recordFailureInOwnTransaction(ClaimRequest request, Throwable failure) {
		try (Connection connection = this.dataSource.getConnection()) {
			boolean autoCommit = connection.getAutoCommit();
			connection.setAutoCommit(false);
			try {
				recordFailure(this.table.on(new SingleConnectionDataSource(connection, true)), request, failure);
				connection.commit();
			}
			catch (RuntimeException ex) {
				connection.rollback();
				throw ex;
			}
			finally {
				connection.setAutoCommit(autoCommit);
			}
		}
		catch (SQLException ex) {
			throw new DataAccessResourceFailureException("Could not record the failure of " + request.id(), ex);
		}
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		IdempotencyRecord record = this.table.read(id);
		return (record == null || record.isExpired(this.table.now())) ? Optional.empty() : Optional.of(record);
	}

	@Override
	public boolean delete(RecordId id) {
		return this.table.delete(id);
	}

	@Override
	public String backend() {
		return "jdbc";
	}

	/**
	 * Deletes expired records, at most {@code batchSize} per statement, until none is left.
	 * Safe to run on several instances at once. A live {@code IN_PROGRESS} record never
	 * expires: its expiry is its lease plus the retention.
	 * @param batchSize the most rows one statement deletes
	 * @return how many records were deleted
	 */
	public int deleteExpired(int batchSize) {
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
				return this.table.deleteExpired(now, batchSize);
			}
			catch (DataAccessException ex) {
				if (attempt >= 3 || !(isLockFailure(ex) || ex instanceof ConcurrencyFailureException)) {
					throw ex;
				}
			}
		}
	}

	/**
	 * The record another transaction holds, as far as it can be seen now (an uncommitted
	 * insert cannot be).
	 */
	private IdempotencyRecord heldElsewhere(JdbcRecordTable table, ClaimRequest request) {
		try {
			IdempotencyRecord record = table.read(request.id());
			if (record != null) {
				return record;
			}
		}
		catch (DataAccessException ex) {
			// the caller's transaction is aborted (PostgreSQL after a lock error)
		}
		Instant now = table.now();
		return new IdempotencyRecord(request.id(), RecordStatus.IN_PROGRESS, null, "(another transaction)", 1,
				now.plus(request.leaseTtl()), null, null, null, null, now, now, now.plus(request.leaseTtl()));
	}

	boolean isLockFailure(DataAccessException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql) {
				for (SQLException next = sql; next != null; next = next.getNextException()) {
					if (this.table.dialect().isLockFailure(next)) {
						return true;
					}
				}
			}
		}
		return false;
	}

	/**
	 * The columns the store reads and writes that {@code tableName} lacks on
	 * {@code dataSource}, each looked up by a query that reads no row, so that names resolve
	 * as in the store's own statements (schema-qualified, in the database's case): one query
	 * when none is missing.
	 * @param dataSource the data source
	 * @param tableName the table, as given to the constructor
	 * @return the missing columns, empty when the table has them all
	 * @throws BadSqlGrammarException when there is no such table
	 */
	public static List<String> missingColumns(DataSource dataSource, String tableName) {
		Assert.isTrue(TABLE_NAME.matcher(tableName).matches(), () -> "Invalid table name '" + tableName + "'");
		JdbcClient jdbc = JdbcClient.create(dataSource);
		if (selects(jdbc, JdbcDialect.COLUMNS, tableName)) {
			return List.of();
		}
		jdbc.sql("SELECT 1 FROM " + tableName + " WHERE 1 = 0").query().listOfRows();
		return Stream.of(JdbcDialect.COLUMNS.split(","))
			.map(String::trim)
			.filter((column) -> !selects(jdbc, column, tableName))
			.toList();
	}

	private static boolean selects(JdbcClient jdbc, String columns, String tableName) {
		try {
			jdbc.sql("SELECT " + columns + " FROM " + tableName + " WHERE 1 = 0").query().listOfRows();
			return true;
		}
		catch (BadSqlGrammarException ex) {
			return false;
		}
	}

}
