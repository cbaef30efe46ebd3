package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

class PostgresJdbcCleanupTest extends JdbcCleanupTests {

	PostgresJdbcCleanupTest() {
		super(TestDatabases.postgres(), "postgresql");
	}

}
