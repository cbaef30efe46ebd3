package io.github.idempotency.store.r2dbc;

import java.time.Clock;
import java.time.Instant;

import io.r2dbc.spi.R2dbcException;

import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The store's table on one {@code ConnectionFactory}: its {@link SqlStatements} run by
 * {@link DatabaseClient}, each one round trip on whatever connection the client finds (the
 * caller's reactive transaction, or a connection of its own that commits each statement).
 * It reads rows ({@link #rows}), inserts claims ({@link #inserts}) and takes a claim's later
 * steps ({@link #steps}). Times are epoch milliseconds from the store's clock.
 */
final class R2dbcRecordTable {

	private final DatabaseClient client;

	private final SqlStatements statements;

	private final Clock clock;

	private final R2dbcRows rows;

	private final R2dbcInserts inserts;

	private final R2dbcSteps steps;

	R2dbcRecordTable(DatabaseClient client, SqlStatements statements, Clock clock) {
		this.client = client;
		this.statements = statements;
		this.clock = clock;
		this.rows = new R2dbcRows(statements, client);
		this.inserts = new R2dbcInserts(statements, client, this.rows);
		this.steps = new R2dbcSteps(statements, client, clock);
	}

	Instant now() {
		return this.clock.instant();
	}

	DatabaseClient client() {
		return this.client;
	}

	SqlStatements statements() {
		return this.statements;
	}

	R2dbcRows rows() {
		return this.rows;
	}

	R2dbcInserts inserts() {
		return this.inserts;
	}

	R2dbcSteps steps() {
		return this.steps;
	}

	/**
	 * Whether the failure means that another transaction holds the row (see
	 * {@link SqlStatements#isLockFailure}), by any {@link R2dbcException} in its causes.
	 */
	boolean isLockFailure(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof R2dbcException r2dbc) {
				String state = r2dbc.getSqlState();
				if (this.statements.isLockFailure((state != null) ? state : "", r2dbc.getErrorCode())) {
					return true;
				}
			}
		}
		return false;
	}

}
