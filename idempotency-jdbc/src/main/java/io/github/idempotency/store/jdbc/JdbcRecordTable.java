package io.github.idempotency.store.jdbc;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;

import javax.sql.DataSource;

import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The store's table on one data source: its {@link SqlStatements} run by JDBC, each one
 * round trip on whatever connection {@link JdbcClient} finds (the caller's transaction, or
 * its own auto-committed one). It reads rows ({@link #rows}), inserts claims
 * ({@link #inserts}) and takes a claim's later steps ({@link #steps}). Times are epoch
 * milliseconds from the store's clock, never from the database.
 */
final class JdbcRecordTable {

	private final DataSource dataSource;

	private final SqlStatements statements;

	private final Clock clock;

	private final JdbcRows rows;

	private final JdbcInserts inserts;

	private final JdbcSteps steps;

	private final JdbcClient bounded;

	JdbcRecordTable(DataSource dataSource, SqlStatements statements, Clock clock) {
		this.dataSource = dataSource;
		this.statements = statements;
		this.clock = clock;
		// the claims' statements bound their lock waits themselves
		JdbcClient jdbc = JdbcClient.create(dataSource);
		// every other statement by a query timeout of the lock timeout, so that a row another
		// transaction holds never blocks a step longer (MariaDB's own default wait is 50 s)
		JdbcTemplate bounded = new JdbcTemplate(dataSource);
		bounded.setQueryTimeout((int) Math.max(1, (statements.lockTimeout().toMillis() + 999) / 1000));
		this.bounded = JdbcClient.create(bounded);
		this.rows = new JdbcRows(statements, jdbc);
		this.inserts = new JdbcInserts(statements, jdbc, this.rows);
		this.steps = new JdbcSteps(statements, dataSource, jdbc, this.bounded, new NamedParameterJdbcTemplate(bounded),
				clock, this.rows);
	}

	/**
	 * The same table reached through another data source (a connection of its own).
	 * @param dataSource the data source
	 * @return the table on it
	 */
	JdbcRecordTable on(DataSource dataSource) {
		return new JdbcRecordTable(dataSource, this.statements, this.clock);
	}

	Instant now() {
		return this.clock.instant();
	}

	DataSource dataSource() {
		return this.dataSource;
	}

	SqlStatements statements() {
		return this.statements;
	}

	JdbcRows rows() {
		return this.rows;
	}

	JdbcInserts inserts() {
		return this.inserts;
	}

	JdbcSteps steps() {
		return this.steps;
	}

	/** A client whose statements are bounded by a query timeout of the lock timeout. */
	JdbcClient bounded() {
		return this.bounded;
	}

	/**
	 * Whether the failure means that another transaction holds the row (see
	 * {@link SqlStatements#isLockFailure}), by any {@link SQLException} in its causes.
	 */
	boolean isLockFailure(DataAccessException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql) {
				for (SQLException next = sql; next != null; next = next.getNextException()) {
					if (this.statements.isLockFailure(next.getSQLState(), next.getErrorCode())) {
						return true;
					}
				}
			}
		}
		return false;
	}

}
