package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;
import org.springframework.util.Assert;

/**
 * A store in one database table (see the {@code schema-*.sql} files beside this class):
 * PostgreSQL, MariaDB/MySQL and H2.
 * <p>
 * A claim inserts the record atomically: a first delivery's claim is one statement. A
 * duplicate is answered from the row the claim found — read in the claim's own statement
 * where the database can, otherwise by a second statement. A takeover of an expired claim
 * locks its row ({@code SELECT ... FOR UPDATE NOWAIT}) and updates it, in one short
 * transaction. A row held by another transaction (or a lock wait longer than the lock
 * timeout) means the key is in progress. Every other step is one statement fenced by the
 * claim's owner.
 * <p>
 * <b>Transactions.</b> When an actual Spring transaction runs on this store's
 * {@link DataSource} (a {@code DataSourceTransactionManager} or {@code JpaTransactionManager}
 * transaction: a bound connection with auto-commit off), the claim joins it and is
 * finished in it: the record commits or rolls back with the business writes, and a
 * concurrent duplicate waits on the uncommitted row (up to the lock timeout) and then sees
 * the committed result. Such a claim needs no lease renewal — the transaction is the
 * in-progress marker — and writes its record already {@code COMPLETED}, so that a
 * {@code void} operation's whole cost is the claim's one insert; it never waits for
 * another run's row, and fails at once, retryable, when it meets one. Without a
 * transaction ({@code SUPPORTS}, {@code NOT_SUPPORTED}, another resource's transaction)
 * the claim is held by its lease and every statement auto-commits, but for a takeover's
 * lock and update, whatever the pool's default. A read-only transaction on this store's
 * data source cannot hold a claim: the claim throws {@code IllegalStateException}.
 * <p>
 * <b>Read first.</b> Outside a transaction a claim may first read the row with a plain
 * primary-key {@code SELECT} ({@link #setReadFirst}; by default per workflow while most of
 * its claims find a record): a finished record, a mismatch or a live claim is then answered
 * by that read alone, and anything else goes on to the claim statement, which decides
 * again atomically. Inside the caller's transaction the claim never reads first.
 * <p>
 * Times come from the given {@link Clock} as epoch milliseconds, never from the database.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

	private final JdbcRecordTable table;

	private final JdbcTransactions transactions;

	private final JdbcClaims claims;

	private final JdbcBatchClaims batchClaims;

	private final JdbcBatchCompletions batchCompletions;

	private final JdbcCleanup cleanup;

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
		this(dataSource, tableName, lockTimeout, clock, CleanupTime.SYSTEM);
	}

	JdbcIdempotencyStore(DataSource dataSource, String tableName, Duration lockTimeout, Clock clock,
			CleanupTime cleanupTime) {
		Assert.isTrue(TABLE_NAME.matcher(tableName).matches(), () -> "Invalid table name '" + tableName + "'");
		AutoCommitConnections connections = new AutoCommitConnections(
				JdbcTransactions.transactionsResource(dataSource));
		this.table = new JdbcRecordTable(connections, SqlStatements.of(product(connections), tableName, lockTimeout),
				clock);
		this.transactions = new JdbcTransactions(connections);
		this.claims = new JdbcClaims(this.table, this.transactions, () -> this.readFirst);
		this.batchClaims = new JdbcBatchClaims(this.table, this.claims);
		this.batchCompletions = new JdbcBatchCompletions(this.table, this.transactions);
		this.cleanup = new JdbcCleanup(this.table, cleanupTime);
	}

	private static String product(DataSource dataSource) {
		try {
			return JdbcUtils.extractDatabaseMetaData(dataSource, (metaData) -> metaData.getDatabaseProductName() + " "
					+ metaData.getDatabaseProductVersion() + " " + metaData.getURL());
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("Cannot tell which database the DataSource reaches", ex);
		}
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
		return this.claims.claim(this.table, request, this.transactions.isInTransaction());
	}

	/**
	 * Claims the batch in one statement on PostgreSQL and on MariaDB outside a
	 * transaction, in two on the other databases; what those cannot decide is claimed one
	 * by one.
	 */
	@Override
	public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		boolean inTransaction = this.transactions.isInTransaction();
		if (requests.isEmpty()) {
			return IdempotencyStore.super.claimAll(requests);
		}
		return this.batchClaims.claimAll(requests, inTransaction);
	}

	/**
	 * Completes the batch in one round trip when every handle is a claim of this store of
	 * one kind (held by its lease, or by the caller's transaction), otherwise one after the
	 * other.
	 */
	@Override
	public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		List<Boolean> completed = this.batchCompletions.completeAll(handles, responses);
		return (completed != null) ? completed : IdempotencyStore.super.completeAll(handles, responses);
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		IdempotencyRecord record = this.table.rows().read(id);
		return (record == null || record.isExpired(this.table.now())) ? Optional.empty() : Optional.of(record);
	}

	@Override
	public boolean delete(RecordId id) {
		return this.cleanup.delete(id);
	}

	@Override
	public String backend() {
		return "jdbc";
	}

	/**
	 * Deletes expired records, at most {@code batchSize} per statement, one statement after
	 * the other, until none is left (see {@link #deleteExpired(CleanupPace)}).
	 * @param batchSize the most rows one statement deletes
	 * @return how many records were deleted
	 */
	public int deleteExpired(int batchSize) {
		return deleteExpired(CleanupPace.unpaced(batchSize));
	}

	/**
	 * Deletes the records expired now, oldest first, a batch per statement, pausing after
	 * each batch as {@code pace} says, until none is left; an interrupt during a pause ends
	 * the run early (the thread stays interrupted). Safe to run on several instances at
	 * once: on PostgreSQL and MariaDB a batch skips the rows another transaction holds, so
	 * two instances neither wait for each other nor delete the same row. A live
	 * {@code IN_PROGRESS} record never expires: its expiry is its lease plus the retention.
	 * @param pace the batch size and the pauses
	 * @return how many records were deleted
	 */
	public int deleteExpired(CleanupPace pace) {
		Assert.notNull(pace, "'pace' must not be null");
		return this.cleanup.deleteExpired(pace);
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
		if (selects(jdbc, SqlStatements.COLUMNS, tableName)) {
			return List.of();
		}
		jdbc.sql("SELECT 1 FROM " + tableName + " WHERE 1 = 0").query().listOfRows();
		return Stream.of(SqlStatements.COLUMNS.split(","))
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
