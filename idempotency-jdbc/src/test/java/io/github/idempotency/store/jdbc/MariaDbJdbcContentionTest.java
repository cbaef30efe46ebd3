package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import org.junit.jupiter.api.Nested;

import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.TransactionDefinition;

/**
 * On MariaDB in its default REPEATABLE READ, and in READ COMMITTED.
 */
class MariaDbJdbcContentionTest extends JdbcContentionTests {

	MariaDbJdbcContentionTest() {
		super(TestDatabases.mariaDb(), "mysql");
	}

	@Override
	long lockWaits(JdbcClient jdbc) {
		return lockWaitsOnMariaDb(jdbc);
	}

	@Override
	long sessionId(Connection connection) throws SQLException {
		return sessionIdOnMariaDb(connection);
	}

	@Override
	int killWaitersBehind(JdbcClient jdbc, long holder) {
		return killWaitersBehindOnMariaDb(jdbc, holder);
	}

	static long sessionIdOnMariaDb(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SELECT CONNECTION_ID()")) {
			result.next();
			return result.getLong(1);
		}
	}

	static int killWaitersBehindOnMariaDb(JdbcClient jdbc, long holder) {
		List<Long> waiters = jdbc
			.sql("SELECT r.trx_mysql_thread_id FROM information_schema.INNODB_LOCK_WAITS w "
					+ "JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id "
					+ "JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id "
					+ "WHERE b.trx_mysql_thread_id = :holder")
			.param("holder", holder)
			.query(Long.class)
			.list();
		// KILL takes no parameter; the ids are the server's numbers
		waiters.forEach((waiter) -> jdbc.sql("KILL CONNECTION " + waiter).update());
		return waiters.size();
	}

	static long lockWaitsOnMariaDb(JdbcClient jdbc) {
		return jdbc
			.sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' "
					+ "AND trx_query LIKE :table")
			.param("table", "%" + TABLE + "%")
			.query(Long.class)
			.single();
	}

	@Nested
	class ReadCommitted extends JdbcContentionTests {

		ReadCommitted() {
			super(TestDatabases.mariaDb(), "mysql");
		}

		@Override
		long lockWaits(JdbcClient jdbc) {
			return lockWaitsOnMariaDb(jdbc);
		}

		@Override
		long sessionId(Connection connection) throws SQLException {
			return sessionIdOnMariaDb(connection);
		}

		@Override
		int killWaitersBehind(JdbcClient jdbc, long holder) {
			return killWaitersBehindOnMariaDb(jdbc, holder);
		}

		@Override
		int isolation() {
			return TransactionDefinition.ISOLATION_READ_COMMITTED;
		}

	}

}
