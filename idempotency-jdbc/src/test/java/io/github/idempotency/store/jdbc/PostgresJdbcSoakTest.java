package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

class PostgresJdbcSoakTest extends JdbcSoakTests {

	PostgresJdbcSoakTest() {
		super(TestDatabases.postgres(), "postgresql");
	}

}
