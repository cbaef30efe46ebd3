package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.junit.jupiter.api.Nested;

import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.TransactionDefinition;

class PostgresJdbcContentionTest extends JdbcContentionTests {

	PostgresJdbcContentionTest() {
		super(TestDatabases.postgres(), "postgresql");
	}

	@Override
	long lockWaits(JdbcClient jdbc) {
		return jdbc.sql("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE :table")
			.param("table", "%" + TABLE + "%")
			.query(Long.class)
			.single();
	}

	@Override
	long sessionId(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SELECT pg_backend_pid()")) {
			result.next();
			return result.getLong(1);
		}
	}

	@Override
	int killWaitersBehind(JdbcClient jdbc, long holder) {
		return jdbc
			.sql("SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
					+ "WHERE :holder = ANY (pg_blocking_pids(pid))) AS ended")
			.param("holder", (int) holder)
			.query(Integer.class)
			.single();
	}

	/**
	 * The same, with the callers' transactions {@code SERIALIZABLE}: a claim inside one
	 * that meets a row committed after its snapshot fails to be retried, never waits.
	 */
	@Nested
	class Serializable extends JdbcContentionTests {

		Serializable() {
			super(TestDatabases.postgres(), "postgresql");
		}

		@Override
		long lockWaits(JdbcClient jdbc) {
			return PostgresJdbcContentionTest.this.lockWaits(jdbc);
		}

		@Override
		long sessionId(Connection connection) throws SQLException {
			return PostgresJdbcContentionTest.this.sessionId(connection);
		}

		@Override
		int killWaitersBehind(JdbcClient jdbc, long holder) {
			return PostgresJdbcContentionTest.this.killWaitersBehind(jdbc, holder);
		}

		@Override
		int isolation() {
			return TransactionDefinition.ISOLATION_SERIALIZABLE;
		}

	}

}
