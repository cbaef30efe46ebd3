package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient.StatementSpec;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * What differs between the supported databases: how a claim inserts without failing on a
 * conflict (and whether it reads the row it found in the same statement), how its lock
 * waits are bounded, and which errors mean "another transaction holds the row".
 */
enum JdbcDialect {

	/**
	 * {@code INSERT ... ON CONFLICT DO NOTHING} (a failed statement would abort the
	 * transaction); the same statement sets a transaction-local {@code lock_timeout} to
	 * bound the wait for a row another transaction inserted or locked. On its own the
	 * statement is its transaction, so the setting ends with it; inside the caller's
	 * transaction the statement also puts the previous value back once the insert is
	 * done, so that transaction keeps its own. A claim is one statement whatever it
	 * finds: a read of the row and, when it found none, the insert, in CTEs; or, for a
	 * workflow whose claims are nearly all new (see {@link ReadFirst}), the plain insert,
	 * which costs the server about a fifth less (docs/benchmarks.md), the row read only
	 * when it exists. Lock errors are SQL state 55P03.
	 */
	POSTGRESQL {
		@Override
		String insert(String table, Duration lockTimeout) {
			// the filter on set_config runs before the row is produced, so before any wait
			return "INSERT INTO " + table + " (" + COLUMNS + ") SELECT " + PARAMETERS + " WHERE set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true) IS NOT NULL"
					+ " ON CONFLICT (workflow, idempotency_key) DO NOTHING";
		}

		@Override
		String insertInTransaction(String table, Duration lockTimeout) {
			// one round trip: the restoring set_config is evaluated on the join's output row,
			// which exists only once the count over the insert's rows is known
			return "WITH bounded AS (SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true)), inserted AS (INSERT INTO " + table + " ("
					+ COLUMNS + ") SELECT " + PARAMETERS
					+ " FROM bounded ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING 1) "
					+ "SELECT i.n, set_config('lock_timeout', b.previous, true) FROM bounded b, "
					+ "(SELECT count(*) AS n FROM inserted) i";
		}

		@Override
		boolean insertsNewKeysFirst() {
			return true;
		}

		@Override
		String claim(String table, Duration lockTimeout) {
			// the row is read first, from the statement's snapshot, and the insert runs only when
			// that read found none: a duplicate costs about a read
			return "WITH " + existing(table) + ", inserted AS (INSERT INTO " + table + " (" + COLUMNS + ") SELECT "
					+ PARAMETERS + " WHERE NOT EXISTS (SELECT 1 FROM existing) AND set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true) IS NOT NULL"
					+ " ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING " + COLUMNS + ") " + found();
		}

		@Override
		String claimInTransaction(String table, Duration lockTimeout) {
			// one round trip, as insertInTransaction: the restoring set_config is evaluated on
			// the outer join's one output row, which exists only once the insert is done
			return "WITH bounded AS (SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true)), " + existing(table)
					+ ", inserted AS (INSERT INTO " + table + " (" + COLUMNS + ") SELECT " + PARAMETERS
					+ " FROM bounded WHERE NOT EXISTS (SELECT 1 FROM existing)"
					+ " ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING " + COLUMNS + "), found AS ("
					+ found() + ") "
					+ "SELECT f.*, set_config('lock_timeout', b.previous, true) FROM bounded b LEFT JOIN found f ON true";
		}

		private String existing(String table) {
			return "existing AS (SELECT " + COLUMNS + " FROM " + table
					+ " WHERE workflow = :workflow AND idempotency_key = :key)";
		}

		/**
		 * The row the {@code inserted} CTE returned ({@code claimed} true), else the row the
		 * {@code existing} CTE read ({@code claimed} false), else none: the insert found a row
		 * committed after the statement began, which its snapshot does not show.
		 */
		private String found() {
			return "SELECT true AS claimed, " + COLUMNS + " FROM inserted UNION ALL SELECT false, " + COLUMNS
					+ " FROM existing";
		}

		@Override
		boolean inserted(StatementSpec insert, boolean inTransaction) {
			return inTransaction ? insert.query((rs, row) -> rs.getLong(1)).single() == 1 : insert.update() == 1;
		}

		@Override
		String claimAll(String table, Duration lockTimeout) {
			return "WITH " + input() + ", " + existingAll(table) + ", " + insertedAll(table, "", "set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true) IS NOT NULL AND ") + " " + foundAll();
		}

		@Override
		String insertAllFirst(String table, Duration lockTimeout) {
			return "WITH " + input() + " INSERT INTO " + table + " (" + COLUMNS + ") SELECT i.workflow, i.idempotency_key, "
					+ ":status, i.fingerprint, i.owner, 1, i.lease_until, NULL, NULL, NULL, NULL, :now, :now, "
					+ "i.expires_at FROM input i WHERE set_config('lock_timeout', '" + Math.max(1, lockTimeout.toMillis())
					+ "ms', true) IS NOT NULL ORDER BY i.position ON CONFLICT (workflow, idempotency_key) DO NOTHING "
					+ "RETURNING workflow, idempotency_key";
		}

		@Override
		String insertAllFirstInTransaction(String table, Duration lockTimeout) {
			// the restoring set_config is evaluated on the one row of an aggregate over everything
			// the insert returned, so once every row is inserted
			return "WITH bounded AS (SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true)), " + input() + ", inserted AS (INSERT INTO "
					+ table + " (" + COLUMNS + ") SELECT i.workflow, i.idempotency_key, :status, i.fingerprint, i.owner, "
					+ "1, i.lease_until, NULL, NULL, NULL, NULL, :now, :now, i.expires_at FROM input i, bounded "
					+ "ORDER BY i.position ON CONFLICT (workflow, idempotency_key) DO NOTHING "
					+ "RETURNING workflow, idempotency_key) SELECT n.workflow, n.idempotency_key, r.restored FROM "
					+ "(SELECT set_config('lock_timeout', b.previous, true) AS restored FROM bounded b, "
					+ "(SELECT count(*) FROM inserted) c) r LEFT JOIN inserted n ON true";
		}

		@Override
		String boundsItsLockWaits(Duration lockTimeout) {
			// a setting of the statement's own transaction, which ends with it; evaluated on the
			// row found, before the update waits for its lock
			return " AND set_config('lock_timeout', '" + Math.max(1, lockTimeout.toMillis()) + "ms', true) IS NOT NULL";
		}

		@Override
		String readAllOf(String table) {
			return "SELECT r.workflow, r.idempotency_key, " + columns("r", FIELDS) + " FROM unnest(:workflows, :keys) "
					+ "AS i(workflow, idempotency_key) JOIN " + table
					+ " r ON r.workflow = i.workflow AND r.idempotency_key = i.idempotency_key";
		}

		@Override
		String claimAllInTransaction(String table, Duration lockTimeout) {
			// the restoring set_config is evaluated on the one row of an aggregate over everything
			// the insert returned, so once every row is inserted
			return "WITH bounded AS (SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', '"
					+ Math.max(1, lockTimeout.toMillis()) + "ms', true)), " + input() + ", " + existingAll(table) + ", "
					+ insertedAll(table, ", bounded", "") + ", found AS (" + foundAll() + ") "
					+ "SELECT f.*, r.restored FROM (SELECT set_config('lock_timeout', b.previous, true) AS restored "
					+ "FROM bounded b, (SELECT count(*) FROM found) c) r LEFT JOIN found f ON true";
		}

		@Override
		@Nullable String completeAll(String table, String fence) {
			return "UPDATE " + table + " t SET status = 'COMPLETED', response = u.response, error_type = NULL, "
					+ "error_message = NULL, updated_at = :now, expires_at = CASE WHEN t.expires_at < u.expires_at "
					+ "THEN u.expires_at ELSE t.expires_at END FROM unnest(:workflows, :keys, "
					+ ":owners, :responses, :expiresAts) WITH ORDINALITY AS u(workflow, idempotency_key, owner, response, "
					+ "expires_at, position) WHERE t.workflow = u.workflow AND t.idempotency_key = u.idempotency_key "
					+ "AND t.owner = u.owner" + fence.replace(" status", " t.status") + " RETURNING u.position";
		}

		/** The claims, one row each, numbered from 1 in the order given. */
		private String input() {
			return "input AS (SELECT * FROM unnest(:workflows, :keys, :fingerprints, :owners, :leaseUntils, :expiresAts) "
					+ "WITH ORDINALITY AS i(workflow, idempotency_key, fingerprint, owner, lease_until, expires_at, "
					+ "position))";
		}

		/** The rows of the claims that exist, each read but for its id, which is its claim's. */
		private String existingAll(String table) {
			return "existing AS (SELECT i.position, " + columns("r", FIELDS) + " FROM input i JOIN " + table
					+ " r ON r.workflow = i.workflow AND r.idempotency_key = i.idempotency_key)";
		}

		/**
		 * Inserts the claims the {@code existing} CTE found no row for, in the order given
		 * (every batch inserts in the same order, so two batches never wait for each other
		 * in a cycle).
		 */
		private String insertedAll(String table, String from, String condition) {
			return "inserted AS (INSERT INTO " + table + " (" + COLUMNS + ") SELECT i.workflow, i.idempotency_key, "
					+ ":status, i.fingerprint, i.owner, 1, i.lease_until, NULL, NULL, NULL, NULL, :now, :now, "
					+ "i.expires_at FROM input i" + from + " WHERE " + condition
					+ "NOT EXISTS (SELECT 1 FROM existing e WHERE e.position = i.position) ORDER BY i.position "
					+ "ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING workflow, idempotency_key)";
		}

		/**
		 * Per claim, its position and the row the {@code existing} CTE read ({@code claimed}
		 * false), else its position alone when the {@code inserted} CTE inserted its record
		 * ({@code claimed} true: the record is the one given, nothing is read back); a claim
		 * whose insert found a row committed after the statement began has neither. The row
		 * found comes first: it names the columns.
		 */
		private String foundAll() {
			return "SELECT false AS claimed, e.position, " + columns("e", FIELDS) + " FROM existing e "
					+ "UNION ALL SELECT true, i.position, " + FIELDS.replaceAll("\\w+", "NULL")
					+ " FROM inserted n JOIN input i ON i.workflow = n.workflow AND i.idempotency_key = n.idempotency_key";
		}

		private String columns(String alias, String columns) {
			return alias + "." + columns.replace(", ", ", " + alias + ".");
		}

		@Override
		String deleteExpired(String table) {
			// expires_at again outside the subquery: a row that waited on a lock is re-checked
			// against its new version only by the conditions on the deleted table itself
			return "DELETE FROM " + table + " WHERE (workflow, idempotency_key) IN (SELECT workflow, idempotency_key FROM "
					+ table + " WHERE expires_at <= :now LIMIT :limit) AND expires_at <= :now";
		}

		@Override
		boolean isLockFailure(SQLException ex) {
			return "55P03".equals(ex.getSQLState());
		}
	},

	/**
	 * A plain {@code INSERT}, a duplicate key (1062) meaning the row exists — never
	 * {@code INSERT IGNORE}, which would hide other errors too; a statement's failure does
	 * not abort the transaction here. Waits are bounded per statement with MariaDB's
	 * {@code SET STATEMENT innodb_lock_wait_timeout}; lock errors are 1205, 3572 and
	 * deadlocks (1213). Outside the caller's transaction a claim is one statement whatever
	 * it finds: {@code INSERT ... ON DUPLICATE KEY UPDATE} with a no-op update and
	 * {@code RETURNING} answers the inserted row or the existing one, as committed (the
	 * update locks the row for that one statement). Inside the caller's transaction that
	 * lock would be held until the transaction ends, so there a duplicate key is followed by
	 * a read. A batch outside a transaction is claimed the same way, in one multi-row
	 * statement, and completed with one multi-table {@code UPDATE} (see
	 * {@link #completeCounted}).
	 */
	MARIADB {
		@Override
		String insert(String table, Duration lockTimeout) {
			return "SET STATEMENT innodb_lock_wait_timeout = " + Math.max(1, lockTimeout.toSeconds())
					+ " FOR INSERT INTO " + table + " (" + COLUMNS + ") VALUES (" + PARAMETERS + ")";
		}

		@Override
		String claim(String table, Duration lockTimeout) {
			// the owner is unique to this claim: the row carries it only when this statement inserted it
			return insert(table, lockTimeout) + " ON DUPLICATE KEY UPDATE workflow = workflow RETURNING owner = :owner"
					+ " AS claimed, " + COLUMNS;
		}

		@Override
		String completeCounted(String table, String fence, int rows) {
			StringBuilder claims = new StringBuilder("SELECT :workflow0 AS workflow, :key0 AS idempotency_key, "
					+ ":owner0 AS owner, :response0 AS response, :expiresAt0 AS expires_at");
			for (int i = 1; i < rows; i++) {
				claims.append(" UNION ALL SELECT :workflow").append(i).append(", :key").append(i).append(", :owner")
					.append(i).append(", :response").append(i).append(", :expiresAt").append(i);
			}
			// the claims first, each row then found by its key: a scan of the table, which the optimizer
			// picks while it thinks the table small, would lock rows of other batches and deadlock with them
			return "UPDATE (" + claims + ") u STRAIGHT_JOIN " + table + " t FORCE INDEX (PRIMARY) ON t.workflow = "
					+ "u.workflow AND t.idempotency_key = u.idempotency_key SET t.status = 'COMPLETED', "
					+ "t.response = u.response, t.error_type = NULL, t.error_message = NULL, t.updated_at = :now, "
					+ "t.expires_at = CASE WHEN t.expires_at < u.expires_at THEN u.expires_at ELSE t.expires_at END "
					+ "WHERE t.owner = u.owner"
					+ fence.replace(" status", " t.status");
		}

		@Override
		String upsertAll(String table, Duration lockTimeout, int rows) {
			// as the single claim: a no-op update of each row found answers it as committed
			return insertAll(table, lockTimeout, rows) + " ON DUPLICATE KEY UPDATE workflow = workflow RETURNING "
					+ COLUMNS;
		}

		@Override
		String deleteExpired(String table) {
			return "DELETE FROM " + table + " WHERE expires_at <= :now LIMIT :limit";
		}

		@Override
		String selectCommitted(String table) {
			// a locking read: InnoDB answers it from the latest committed row, not the snapshot
			return super.selectCommitted(table) + " LOCK IN SHARE MODE";
		}

		@Override
		boolean isLockFailure(SQLException ex) {
			int code = ex.getErrorCode();
			return code == 1205 || code == 3572 || code == 1213;
		}
	},

	/**
	 * MySQL: like MariaDB, without {@code SET STATEMENT}; waits are bounded by the
	 * server's {@code innodb_lock_wait_timeout}.
	 */
	MYSQL {
		@Override
		String insert(String table, Duration lockTimeout) {
			return "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (" + PARAMETERS + ")";
		}

		@Override
		String deleteExpired(String table) {
			return MARIADB.deleteExpired(table);
		}

		@Override
		String selectCommitted(String table) {
			return MARIADB.selectCommitted(table);
		}

		@Override
		boolean isLockFailure(SQLException ex) {
			return MARIADB.isLockFailure(ex);
		}
	},

	/**
	 * H2: a plain {@code INSERT}, a duplicate key meaning the row exists; waits are bounded
	 * by H2's {@code LOCK_TIMEOUT}; lock errors are 50200.
	 */
	H2 {
		@Override
		String insert(String table, Duration lockTimeout) {
			return MYSQL.insert(table, lockTimeout);
		}

		@Override
		String deleteExpired(String table) {
			return "DELETE FROM " + table + " WHERE expires_at <= :now FETCH FIRST :limit ROWS ONLY";
		}

		@Override
		boolean isLockFailure(SQLException ex) {
			return ex.getErrorCode() == 50200;
		}
	};

	/** The columns of a record but its id (workflow and key), in the order the store reads them. */
	static final String FIELDS = "status, fingerprint, owner, attempt, lease_until, recovery_point, response, "
			+ "error_type, error_message, created_at, updated_at, expires_at";

	static final String COLUMNS = "workflow, idempotency_key, " + FIELDS;

	static final String PARAMETERS = ":workflow, :key, :status, :fingerprint, :owner, :attempt, :leaseUntil, "
			+ ":recoveryPoint, :response, :errorType, :errorMessage, :createdAt, :updatedAt, :expiresAt";

	private static final String[] PARAMETER_NAMES = PARAMETERS.split(", ");

	/**
	 * An insert, its lock waits bounded by {@code lockTimeout}, that inserts nothing, or
	 * fails with a duplicate key, when the row exists.
	 */
	abstract String insert(String table, Duration lockTimeout);

	/**
	 * The {@link #insert(String, Duration) insert} for a claim that joins the caller's
	 * transaction: it leaves that transaction's settings as they were.
	 */
	String insertInTransaction(String table, Duration lockTimeout) {
		return insert(table, lockTimeout);
	}

	/**
	 * A claim in one statement, or {@code null} when the dialect has none (then the
	 * {@link #insert} is followed by a read when it finds the row): inserts the record
	 * unless its row exists, and answers one row with a boolean column {@code claimed} and
	 * the {@link #COLUMNS} — the inserted record, or the existing one — or no row at all when
	 * the insert found a row that the statement's snapshot does not show (one committed
	 * while the insert waited for it).
	 */
	@Nullable String claim(String table, Duration lockTimeout) {
		return null;
	}

	/**
	 * Whether a claim of a key that is most likely new is cheaper as the plain
	 * {@link #insert} (the row read only when it exists) than as the one-statement
	 * {@link #claim}: on PostgreSQL, whose one-statement claim reads before it inserts.
	 */
	boolean insertsNewKeysFirst() {
		return false;
	}

	/**
	 * The {@link #claim(String, Duration) claim} for a claim that joins the caller's
	 * transaction: it leaves that transaction's settings as they were, and may answer its
	 * row with {@code NULL} in every column instead of no row.
	 */
	@Nullable String claimInTransaction(String table, Duration lockTimeout) {
		return null;
	}

	/**
	 * A claim of many records in one statement, or {@code null} when the dialect has none
	 * (then each is claimed on its own): takes arrays {@code workflows}, {@code keys},
	 * {@code fingerprints}, {@code owners}, {@code leaseUntils}, {@code expiresAts} (one
	 * element per claim, no key twice) and scalars {@code status} and {@code now};
	 * inserts the records whose rows do not exist, and answers per claim at most one row:
	 * {@code claimed}, {@code position} (from 1) and the {@link #COLUMNS} of the inserted or
	 * the existing record. A claim that has no row found a row committed while the
	 * statement ran.
	 */
	@Nullable String claimAll(String table, Duration lockTimeout) {
		return null;
	}

	/**
	 * Where the dialect has a {@link #claimAll one-statement batch claim}, an insert of many
	 * records that inserts each one whose row does not exist, in the order given, and
	 * answers the {@code workflow} and {@code idempotency_key} of those it inserted, for
	 * claims outside a transaction: the parameters of {@link #claimAll}.
	 */
	@Nullable String insertAllFirst(String table, Duration lockTimeout) {
		return null;
	}

	/**
	 * The {@link #insertAllFirst} for claims that join the caller's transaction: it leaves
	 * that transaction's settings as they were, and answers a row with {@code NULL} in both
	 * columns when it inserted none.
	 */
	@Nullable String insertAllFirstInTransaction(String table, Duration lockTimeout) {
		return null;
	}

	/**
	 * Where the dialect has {@link #insertAllFirst}, a read of the rows of many records
	 * named by the arrays {@code workflows} and {@code keys}, answering the
	 * {@link #COLUMNS}.
	 */
	@Nullable String readAllOf(String table) {
		return null;
	}

	/**
	 * The {@link #claimAll(String, Duration) claimAll} for claims that join the caller's
	 * transaction: it leaves that transaction's settings as they were, and may answer a row
	 * with {@code NULL} in every column.
	 */
	@Nullable String claimAllInTransaction(String table, Duration lockTimeout) {
		return null;
	}

	/**
	 * A condition, starting with {@code AND}, that bounds by {@code lockTimeout} the lock
	 * waits of the statement whose {@code WHERE} it ends, for a statement that is a
	 * transaction of its own; empty where the dialect has none, and a query timeout bounds
	 * the statement instead.
	 */
	String boundsItsLockWaits(Duration lockTimeout) {
		return "";
	}

	/**
	 * A completion of many claims in one statement, or {@code null} when the dialect has
	 * none (then a JDBC batch of single completions): takes arrays {@code workflows},
	 * {@code keys}, {@code owners}, {@code responses}, {@code expiresAts} and the scalar
	 * {@code now}, and answers the {@code position} (from 1) of each record it completed.
	 * @param table the table
	 * @param fence the condition a claim's row must meet besides its owner, starting with
	 * {@code AND}, or empty
	 */
	@Nullable String completeAll(String table, String fence) {
		return null;
	}

	/**
	 * Where the dialect has no {@link #completeAll} that names what it completed, a
	 * completion of {@code rows} claims in one statement that answers only how many rows
	 * it completed, or {@code null} when it has none. The parameters of claim {@code i} are
	 * {@code workflow}, {@code key}, {@code owner}, {@code response} and {@code expiresAt}
	 * suffixed with {@code i}, and the scalar {@code now}.
	 * @param table the table
	 * @param fence as for {@link #completeAll}
	 * @param rows how many claims
	 */
	@Nullable String completeCounted(String table, String fence, int rows) {
		return null;
	}

	/**
	 * Where the dialect has no {@link #claimAll one-statement batch claim}, a claim of
	 * {@code rows} records in one statement outside a transaction, or {@code null} when it
	 * has none: inserts each record whose row does not exist, and answers per record one
	 * row of the {@link #COLUMNS}, the record inserted or the row found (locked for the
	 * statement); the parameters as for {@link #insertAll}.
	 */
	@Nullable String upsertAll(String table, Duration lockTimeout, int rows) {
		return null;
	}

	/**
	 * An insert of {@code rows} records in one statement, its lock waits bounded by
	 * {@code lockTimeout}, that fails as a whole with a duplicate key when one of the rows
	 * exists; the parameters of row {@code i} are those of {@link #PARAMETERS} suffixed with
	 * {@code i}. Only for the dialects without a {@link #claimAll one-statement batch claim}.
	 */
	String insertAll(String table, Duration lockTimeout, int rows) {
		String insert = insert(table, lockTimeout);
		StringBuilder sql = new StringBuilder(insert.substring(0, insert.lastIndexOf("VALUES (") + 7));
		for (int i = 0; i < rows; i++) {
			sql.append((i > 0) ? ", (" : "(");
			for (int j = 0; j < PARAMETER_NAMES.length; j++) {
				sql.append((j > 0) ? ", " : "").append(PARAMETER_NAMES[j]).append(i);
			}
			sql.append(')');
		}
		return sql.toString();
	}

	/**
	 * A read of the rows of {@code rows} records in one statement, the parameters of row
	 * {@code i} being {@code workflow}{@code i} and {@code key}{@code i}.
	 */
	String selectAll(String table, int rows) {
		StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM " + table
				+ " WHERE (workflow, idempotency_key) IN (");
		for (int i = 0; i < rows; i++) {
			sql.append((i > 0) ? ", " : "").append("(:workflow").append(i).append(", :key").append(i).append(')');
		}
		return sql.append(')').toString();
	}

	/**
	 * Runs an insert.
	 * @param insert the {@link #insert} or {@link #insertInTransaction} with its parameters
	 * @param inTransaction whether it is the latter
	 * @return whether it inserted the row
	 */
	boolean inserted(StatementSpec insert, boolean inTransaction) {
		return insert.update() == 1;
	}

	abstract String deleteExpired(String table);

	abstract boolean isLockFailure(SQLException ex);

	/**
	 * A read of the latest committed row, whatever the transaction's snapshot.
	 */
	String selectCommitted(String table) {
		return "SELECT " + COLUMNS + " FROM " + table + " WHERE workflow = :workflow AND idempotency_key = :key";
	}

	String selectForUpdate(String table) {
		return "SELECT " + COLUMNS + " FROM " + table
				+ " WHERE workflow = :workflow AND idempotency_key = :key FOR UPDATE NOWAIT";
	}

	static JdbcDialect of(DataSource dataSource) {
		try {
			String product = JdbcUtils.extractDatabaseMetaData(dataSource, (metaData) -> metaData
				.getDatabaseProductName() + " " + metaData.getDatabaseProductVersion() + " " + metaData.getURL());
			String name = product.toLowerCase(Locale.ROOT);
			if (name.contains("postgres")) {
				return POSTGRESQL;
			}
			if (name.contains("mariadb")) {
				return MARIADB;
			}
			if (name.contains("mysql")) {
				return MYSQL;
			}
			if (name.contains("h2")) {
				return H2;
			}
			throw new IllegalStateException("The jdbc idempotency store supports PostgreSQL, MariaDB, MySQL and H2, not "
					+ product);
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("Cannot tell which database the DataSource reaches", ex);
		}
	}

}
