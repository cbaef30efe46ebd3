package io.github.idempotency.store.jdbc;

import io.github.idempotency.testsupport.TestDatabases;
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
	int killLockWaiters(JdbcClient jdbc) {
		return jdbc
			.sql("SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
					+ "WHERE wait_event_type = 'Lock' AND query LIKE :table) AS ended")
			.param("table", "%" + TABLE + "%")
			.query(Integer.class)
			.single();
	}

}
