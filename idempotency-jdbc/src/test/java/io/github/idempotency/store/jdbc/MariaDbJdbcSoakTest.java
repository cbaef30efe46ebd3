package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

class MariaDbJdbcSoakTest extends JdbcSoakTests {

	MariaDbJdbcSoakTest() {
		super(TestDatabases.mariaDb(), "mysql");
	}

}
