package io.github.idempotency.store.jdbc;

import io.github.idempotency.testsupport.TestDatabases;

class PostgresJdbcSoakTest extends JdbcSoakTests {

	PostgresJdbcSoakTest() {
		super(TestDatabases.postgres(), "postgresql");
	}

}
