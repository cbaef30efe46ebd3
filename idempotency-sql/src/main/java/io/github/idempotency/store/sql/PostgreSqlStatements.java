package io.github.idempotency.store.sql;

import java.time.Duration;

/**
 * PostgreSQL: {@code INSERT ... ON CONFLICT DO NOTHING} (a failed statement would abort
 * the transaction). A statement bounds its own lock waits with a transaction-local
 * {@code lock_timeout} ({@code set_config(..., true)}): on its own the statement is its
 * transaction, so the setting ends with it; inside the caller's transaction the statement
 * also puts the previous value back once it is done, so that transaction keeps its own.
 * A claim is one statement whatever it finds: a read of the row and, when it found none,
 * the insert, in CTEs; a batch is one such statement over arrays ({@code unnest}), and its
 * completion one {@code UPDATE ... FROM unnest(...)}. Lock errors are SQL state 55P03.
 */
final class PostgreSqlStatements extends SqlStatements {

	/** The claims of a batch, one row each, numbered from 1 in the order given. */
	private static final String INPUT = """
			input AS (SELECT * FROM unnest(:workflows, :keys, :fingerprints, :owners, :leaseUntils, :expiresAts)
			WITH ORDINALITY AS i(workflow, idempotency_key, fingerprint, owner, lease_until, expires_at, position))
			""";

	/** The row of a single claim, if it exists. */
	private static final String EXISTING = """
			existing AS (SELECT {columns} FROM {table} WHERE workflow = :workflow AND idempotency_key = :key)
			""";

	/** The rows of a batch's claims that exist, each read but for its id, which is its claim's. */
	private static final String EXISTING_ALL = """
			existing AS (SELECT i.position, r.status, r.fingerprint, r.owner, r.attempt, r.lease_until,
			r.recovery_point, r.response, r.error_type, r.error_message, r.created_at, r.updated_at, r.expires_at
			FROM input i JOIN {table} r ON r.workflow = i.workflow AND r.idempotency_key = i.idempotency_key)
			""";

	/** What a batch inserts, per claim of {@link #INPUT}: the columns of a new record. */
	private static final String NEW_ROWS = """
			INSERT INTO {table} ({columns}) SELECT i.workflow, i.idempotency_key, :status, i.fingerprint, i.owner, 1,
			i.lease_until, NULL, NULL, NULL, NULL, :now, :now, i.expires_at
			""";

	/** The insert's end: every batch inserts in the order given, so two never wait for each other in a cycle. */
	private static final String IN_ORDER = """
			ORDER BY i.position ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING workflow, idempotency_key
			""";

	/**
	 * Per claim of a batch, its position and the row {@link #EXISTING_ALL} read
	 * ({@code claimed} false), else its position alone when the insert inserted its record
	 * ({@code claimed} true: the record is the one given, nothing is read back). The row
	 * found comes first: it names the columns.
	 */
	private static final String FOUND_ALL = """
			SELECT false AS claimed, e.position, e.status, e.fingerprint, e.owner, e.attempt, e.lease_until,
			e.recovery_point, e.response, e.error_type, e.error_message, e.created_at, e.updated_at, e.expires_at
			FROM existing e UNION ALL SELECT true, i.position, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
			NULL, NULL, NULL FROM inserted n JOIN input i ON i.workflow = n.workflow AND i.idempotency_key = n.idempotency_key
			""";

	/** The inserted row ({@code claimed} true), else the row {@link #EXISTING} read, else none. */
	private static final String FOUND = """
			SELECT true AS claimed, {columns} FROM inserted UNION ALL SELECT false, {columns} FROM existing
			""";

	/**
	 * The {@code ... RETURNING u.position} completion of a batch over arrays; {@code {fence}}
	 * is the condition its rows meet besides their owners.
	 */
	private static final String COMPLETE_ALL = """
			UPDATE {table} t SET status = 'COMPLETED', response = u.response, error_type = NULL, error_message = NULL,
			updated_at = :now, expires_at = CASE WHEN t.expires_at < u.expires_at THEN u.expires_at ELSE t.expires_at END
			FROM unnest(:workflows, :keys, :owners, :responses, :expiresAts) WITH ORDINALITY
			AS u(workflow, idempotency_key, owner, response, expires_at, position)
			WHERE t.workflow = u.workflow AND t.idempotency_key = u.idempotency_key AND t.owner = u.owner{fence}
			RETURNING u.position
			""";

	PostgreSqlStatements(String table, Duration lockTimeout) {
		super(table, lockTimeout);
	}

	/**
	 * A statement written as a text block with the lock timeout's settings filled in:
	 * {@code {bound}}, a condition true once the statement's own transaction waits at most
	 * the lock timeout (the filter runs before any row is produced, so before any wait), and
	 * {@code {bounded}}, a CTE that sets it and keeps the {@code previous} value for the
	 * caller's transaction.
	 */
	private String pg(String template) {
		String timeout = Math.max(1, lockTimeout().toMillis()) + "ms";
		return sql(template.replace("{bounded}", "bounded AS (SELECT current_setting('lock_timeout') AS previous, "
				+ "set_config('lock_timeout', '" + timeout + "', true))")
			.replace("{bound}", "set_config('lock_timeout', '" + timeout + "', true) IS NOT NULL"));
	}

	@Override
	public String insert() {
		return pg("""
				INSERT INTO {table} ({columns}) SELECT {parameters} WHERE {bound}
				ON CONFLICT (workflow, idempotency_key) DO NOTHING
				""");
	}

	/** One round trip: the restoring {@code set_config} runs once the count of the inserted rows is known. */
	@Override
	public InsertSql insertInTransaction() {
		return new InsertSql(pg("""
				WITH {bounded}, inserted AS (INSERT INTO {table} ({columns}) SELECT {parameters} FROM bounded
				ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING 1)
				SELECT i.n, set_config('lock_timeout', b.previous, true) FROM bounded b,
				(SELECT count(*) AS n FROM inserted) i
				"""), true);
	}

	/**
	 * The row is read first, from the statement's snapshot, and the insert runs only when
	 * that read found none: a duplicate costs about a read. Inside the caller's transaction
	 * the restoring {@code set_config} is evaluated on the outer join's one output row.
	 */
	@Override
	public ClaimSql claim() {
		String inserted = """
				inserted AS (INSERT INTO {table} ({columns}) SELECT {parameters} %s WHERE NOT EXISTS (SELECT 1 FROM existing)
				%s ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING {columns})
				""";
		return new ClaimSql.ReadOrInsert(
				pg("WITH " + EXISTING + ", " + inserted.formatted("", "AND {bound}") + " " + FOUND),
				pg("WITH {bounded}, " + EXISTING + ", " + inserted.formatted("FROM bounded", "") + ", found AS (" + FOUND
						+ ") SELECT f.*, set_config('lock_timeout', b.previous, true) FROM bounded b LEFT JOIN found f ON true"));
	}

	/**
	 * The restoring {@code set_config} of the statements inside the caller's transaction is
	 * evaluated on the one row of an aggregate over everything inserted, so once every row is.
	 */
	@Override
	public BatchClaimSql batchClaim() {
		String inserted = "inserted AS (" + NEW_ROWS + " FROM input i%s WHERE %s NOT EXISTS (SELECT 1 FROM existing e "
				+ "WHERE e.position = i.position) " + IN_ORDER + ")";
		return new BatchClaimSql.OverArrays(
				pg("WITH " + INPUT + ", " + EXISTING_ALL + ", " + inserted.formatted("", "{bound} AND") + " " + FOUND_ALL),
				pg("WITH {bounded}, " + INPUT + ", " + EXISTING_ALL + ", " + inserted.formatted(", bounded", "")
						+ ", found AS (" + FOUND_ALL + ") SELECT f.*, r.restored FROM (SELECT set_config('lock_timeout', "
						+ "b.previous, true) AS restored FROM bounded b, (SELECT count(*) FROM found) c) r "
						+ "LEFT JOIN found f ON true"),
				pg("WITH " + INPUT + " " + NEW_ROWS + " FROM input i WHERE {bound} " + IN_ORDER),
				pg("WITH {bounded}, " + INPUT + ", inserted AS (" + NEW_ROWS + " FROM input i, bounded " + IN_ORDER
						+ ") SELECT n.workflow, n.idempotency_key, r.restored FROM (SELECT set_config('lock_timeout', "
						+ "b.previous, true) AS restored FROM bounded b, (SELECT count(*) FROM inserted) c) r "
						+ "LEFT JOIN inserted n ON true"),
				sql("""
						SELECT r.workflow, r.idempotency_key, r.status, r.fingerprint, r.owner, r.attempt, r.lease_until,
						r.recovery_point, r.response, r.error_type, r.error_message, r.created_at, r.updated_at,
						r.expires_at FROM unnest(:workflows, :keys) AS i(workflow, idempotency_key)
						JOIN {table} r ON r.workflow = i.workflow AND r.idempotency_key = i.idempotency_key
						"""));
	}

	@Override
	public BatchCompletionSql batchCompletion() {
		return new BatchCompletionSql.OverArrays(completeAll(Fence.LEASE.condition()),
				completeAll(Fence.LEASE.condition() + " AND {bound}"), completeAll(Fence.TRANSACTION.condition()));
	}

	private String completeAll(String fence) {
		return pg(COMPLETE_ALL.replace("{fence}", fence.replace(" status", " t.status")));
	}

	/** A completion that is a transaction of its own bounds its lock wait in its own statement. */
	@Override
	public LockWaits lockWaits() {
		return new LockWaits.InStatement(pg(complete(Fence.LEASE) + " AND {bound}"));
	}

	/**
	 * {@code expires_at} again outside the subquery: a row that waited on a lock is
	 * re-checked against its new version only by the conditions on the deleted table itself.
	 */
	@Override
	public String deleteExpired() {
		return sql("""
				DELETE FROM {table} WHERE (workflow, idempotency_key) IN (SELECT workflow, idempotency_key
				FROM {table} WHERE expires_at <= :now LIMIT :limit) AND expires_at <= :now
				""");
	}

	@Override
	public boolean isLockFailure(String sqlState, int errorCode) {
		return "55P03".equals(sqlState);
	}

}
