package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

class MariaDbJdbcCleanupTest extends JdbcCleanupTests {

	MariaDbJdbcCleanupTest() {
		super(TestDatabases.mariaDb(), "mysql");
	}

}
