package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

/**
 * On MariaDB.
 */
class MariaDbDataSourceTransactionTest extends DataSourceTransactionTests {

	MariaDbDataSourceTransactionTest() {
		super(TestDatabases.mariaDb(), "mysql");
	}

}
