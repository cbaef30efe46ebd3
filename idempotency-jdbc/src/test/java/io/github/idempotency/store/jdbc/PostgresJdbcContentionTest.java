package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;

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

}
