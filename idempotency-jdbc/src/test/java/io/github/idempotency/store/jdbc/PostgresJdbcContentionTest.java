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

}
