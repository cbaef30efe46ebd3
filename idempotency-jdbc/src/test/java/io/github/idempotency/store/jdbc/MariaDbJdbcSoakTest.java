package io.github.idempotency.store.jdbc;

import io.github.idempotency.testsupport.TestDatabases;

class MariaDbJdbcSoakTest extends JdbcSoakTests {

	MariaDbJdbcSoakTest() {
		super(TestDatabases.mariaDb(), "mysql");
	}

}
