package io.github.idempotency.store.sql;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;

/**
 * The SQL of the store's table on one database: the statement source every executor
 * takes its statements from, chosen once at start-up ({@link #of}). One subclass per
 * database holds what differs; what a database can do is said by the capabilities it
 * answers ({@link #claim()}, {@link #batchClaim()}, {@link #batchCompletion()},
 * {@link #lockWaits()}), never by a statement that is missing.
 * <p>
 * Statements name their parameters ({@code :workflow}); the parameters of a statement
 * that writes a whole record are {@link #RECORD_PARAMETERS}, in that order. Times are
 * epoch milliseconds (the store's clock, never the database's), texts are strings and
 * the array parameters of {@link BatchClaimSql.OverArrays} and
 * {@link BatchCompletionSql.OverArrays} are arrays of text or of 64-bit integers. Nothing
 * here depends on how a statement is run: the {@code jdbc} store runs them with JDBC, the
 * {@code r2dbc} store with R2DBC, each expanding the names as its driver wants them.
 * <p>
 * For store implementations: the SQL the relational stores share, not an application's API.
 */
public abstract sealed class SqlStatements permits PostgreSqlStatements, MySqlStatements, H2Statements {

	/** The columns of a record but its id (workflow and key), in the order the store reads them. */
	public static final String FIELDS = "status, fingerprint, owner, attempt, lease_until, recovery_point, response, "
			+ "error_type, error_message, created_at, updated_at, expires_at";

	/** Every column of a record, its id first. */
	public static final String COLUMNS = "workflow, idempotency_key, " + FIELDS;

	/** The parameters of a record's values, one per column of {@link #COLUMNS}, in its order. */
	public static final List<String> RECORD_PARAMETERS = List.of("workflow", "key", "status", "fingerprint", "owner",
			"attempt", "leaseUntil", "recoveryPoint", "response", "errorType", "errorMessage", "createdAt", "updatedAt",
			"expiresAt");

	/** {@link #RECORD_PARAMETERS} as the statements write them. */
	public static final String PARAMETERS = ":" + String.join(", :", RECORD_PARAMETERS);

	/** The parameters of {@link #select} and {@link #selectFinished}, in order. */
	public static final List<String> ID_PARAMETERS = List.of("workflow", "key");

	/** The parameters of {@link #complete}, in order. */
	public static final List<String> COMPLETION_PARAMETERS = List.of("workflow", "key", "owner", "response", "now",
			"expiresAt");

	/**
	 * Moves {@code expires_at} to {@code :expiresAt} unless it is later already: a step never
	 * shortens how long a record is kept. A record finished within its lease so keeps the
	 * claim's {@code expires_at} (the lease's end + retention), and finishing it changes no
	 * indexed column.
	 */
	private static final String KEPT_UNTIL = "expires_at = CASE WHEN expires_at < :expiresAt THEN :expiresAt "
			+ "ELSE expires_at END";

	private static final String BY_ID = "WHERE workflow = :workflow AND idempotency_key = :key";

	private final String table;

	private final Duration lockTimeout;

	SqlStatements(String table, Duration lockTimeout) {
		this.table = table;
		this.lockTimeout = lockTimeout;
	}

	/**
	 * The statements of {@code table} on the database a product name and URL name.
	 * @param product the database's product name, version and URL
	 * @param table the table
	 * @param lockTimeout how long a claim waits for a row another transaction holds
	 * @throws IllegalStateException for a database the store does not support
	 */
	public static SqlStatements of(String product, String table, Duration lockTimeout) {
		String name = product.toLowerCase(Locale.ROOT);
		if (name.contains("postgres")) {
			return new PostgreSqlStatements(table, lockTimeout);
		}
		if (name.contains("mariadb")) {
			return new MariaDbStatements(table, lockTimeout);
		}
		if (name.contains("mysql")) {
			return new MySqlStatements(table, lockTimeout);
		}
		if (name.contains("h2")) {
			return new H2Statements(table, lockTimeout);
		}
		throw new IllegalStateException("The relational idempotency stores support PostgreSQL, MariaDB, MySQL and H2, not "
				+ product);
	}

	/** How long a claim waits for a row another transaction holds. */
	public final Duration lockTimeout() {
		return this.lockTimeout;
	}

	/**
	 * A statement written as a text block, on one line, with {@code {table}},
	 * {@code {columns}}, {@code {fields}} and {@code {parameters}} filled in.
	 */
	public final String sql(String template) {
		return template.strip()
			.replaceAll("\\s*\\n\\s*", " ")
			.replaceAll(" {2,}", " ")
			.replace(" ,", ",")
			.replace("{table}", this.table)
			.replace("{columns}", COLUMNS)
			.replace("{fields}", FIELDS)
			.replace("{parameters}", PARAMETERS);
	}

	// ---- capabilities

	/** How a single claim inserts and reads its row. */
	public abstract ClaimSql claim();

	/** How a batch of claims is claimed. */
	public abstract BatchClaimSql batchClaim();

	/** How a batch of claims is completed. */
	public abstract BatchCompletionSql batchCompletion();

	/** How a statement's wait for a row another transaction holds is bounded. */
	public LockWaits lockWaits() {
		return new LockWaits.ByQueryTimeout();
	}

	/**
	 * Whether an error, by its SQL state and vendor code, means that another transaction
	 * holds the row (a lock wait given up, a lock refused, a deadlock lost).
	 */
	public abstract boolean isLockFailure(String sqlState, int errorCode);

	// ---- claims

	/**
	 * An insert of a record ({@link #RECORD_PARAMETERS}), its lock waits bounded by the
	 * lock timeout, that inserts nothing, or fails with a duplicate key, when the row
	 * exists; it answers an update count.
	 */
	public abstract String insert();

	/**
	 * The {@link #insert} for a claim that joins the caller's transaction: it leaves that
	 * transaction's settings as they were.
	 */
	public InsertSql insertInTransaction() {
		return new InsertSql(insert(), false);
	}

	/**
	 * For a database whose {@link #insert} ends with its {@code VALUES}: per number of
	 * rows, an insert of that many records in one statement, its lock waits bounded as
	 * {@link #insert}'s, that fails as a whole with a duplicate key when one of the rows
	 * exists; the parameters of row {@code i} are {@link #RECORD_PARAMETERS} suffixed with
	 * {@code i}.
	 */
	public final IntFunction<String> insertAll() {
		String insert = insert();
		String into = insert.substring(0, insert.lastIndexOf("VALUES (") + 7);
		return (rows) -> {
			StringBuilder sql = new StringBuilder(into);
			for (int i = 0; i < rows; i++) {
				sql.append((i > 0) ? ", (" : "(");
				for (int j = 0; j < RECORD_PARAMETERS.size(); j++) {
					sql.append((j > 0) ? ", :" : ":").append(RECORD_PARAMETERS.get(j)).append(i);
				}
				sql.append(')');
			}
			return sql.toString();
		};
	}

	/**
	 * Per number of rows, a read of the rows of that many records, answering the
	 * {@link #COLUMNS}; the parameters of row {@code i} are {@code workflow}{@code i} and
	 * {@code key}{@code i}.
	 */
	public final IntFunction<String> selectAll() {
		String select = sql("SELECT {columns} FROM {table} WHERE (workflow, idempotency_key) IN (");
		return (rows) -> {
			StringBuilder sql = new StringBuilder(select);
			for (int i = 0; i < rows; i++) {
				sql.append((i > 0) ? ", " : "").append("(:workflow").append(i).append(", :key").append(i).append(')');
			}
			return sql.append(')').toString();
		};
	}

	/** Overwrites a locked row with a takeover ({@link #RECORD_PARAMETERS}). */
	public final String takeOver() {
		return sql("""
				UPDATE {table} SET status = :status, fingerprint = :fingerprint, owner = :owner, attempt = :attempt,
				lease_until = :leaseUntil, recovery_point = :recoveryPoint, response = NULL, error_type = NULL,
				error_message = NULL, created_at = :createdAt, updated_at = :updatedAt, expires_at = :expiresAt
				""" + BY_ID);
	}

	// ---- reads

	/** The {@link #FIELDS} of a record ({@link #ID_PARAMETERS}). */
	public final String select() {
		return sql("SELECT {fields} FROM {table} " + BY_ID);
	}

	/** What answers a duplicate of a finished record: status, fingerprint, response, expiry. */
	public final String selectFinished() {
		return sql("SELECT status, fingerprint, response, expires_at FROM {table} " + BY_ID);
	}

	/** A read of the {@link #COLUMNS} of the latest committed row, whatever the transaction's snapshot. */
	public String selectCommitted() {
		return sql("SELECT {columns} FROM {table} " + BY_ID);
	}

	/** A read of the {@link #COLUMNS} that locks the row, failing at once when another transaction holds it. */
	public final String selectForUpdate() {
		return sql("SELECT {columns} FROM {table} " + BY_ID + " FOR UPDATE NOWAIT");
	}

	// ---- the steps of a claim, each fenced

	/**
	 * Completes a claim ({@link #COMPLETION_PARAMETERS}); a {@code fence} that bounds the
	 * statement's lock waits may follow.
	 */
	public final String complete(Fence fence) {
		return sql("""
				UPDATE {table} SET status = 'COMPLETED', response = :response, error_type = NULL,
				error_message = NULL, updated_at = :now,
				""" + KEPT_UNTIL + owned(fence));
	}

	/** Fails a claim: {@code errorType}, {@code errorMessage}, {@code now}, {@code expiresAt} and its id and owner. */
	public final String fail(Fence fence) {
		return sql("""
				UPDATE {table} SET status = 'FAILED', response = NULL, error_type = :errorType,
				error_message = :errorMessage, updated_at = :now,
				""" + KEPT_UNTIL + owned(fence));
	}

	/** Deletes a claim's record: its id and owner. */
	public final String release(Fence fence) {
		return sql("DELETE FROM {table}" + owned(fence));
	}

	/**
	 * Extends a claim's lease: {@code leaseUntil}, {@code now}, {@code recoveryPoint} (kept
	 * when {@code NULL}), {@code expiresAt} and its id and owner.
	 */
	public final String extend(Fence fence) {
		return sql("""
				UPDATE {table} SET lease_until = :leaseUntil, updated_at = :now,
				recovery_point = COALESCE(:recoveryPoint, recovery_point),
				""" + KEPT_UNTIL + owned(fence));
	}

	// ---- cleanup

	/** Deletes a record ({@link #ID_PARAMETERS}). */
	public final String delete() {
		return sql("DELETE FROM {table} " + BY_ID);
	}

	/** Deletes at most {@code :limit} records expired by {@code :now}. */
	public abstract String deleteExpired();

	private static String owned(Fence fence) {
		return " WHERE workflow = :workflow AND idempotency_key = :key AND owner = :owner" + fence.condition();
	}

	/**
	 * An insert and how it answers.
	 * @param sql the statement
	 * @param countsInARow whether it answers one row whose first column counts the rows it
	 * inserted, rather than an update count
	 */
	public record InsertSql(String sql, boolean countsInARow) {
	}

}
