package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

/**
 * On PostgreSQL.
 */
class PostgresDataSourceTransactionTest extends DataSourceTransactionTests {

	PostgresDataSourceTransactionTest() {
		super(TestDatabases.postgres(), "postgresql");
	}

}
