package io.github.idempotency.store.jdbc;

import io.github.idempotency.testservers.TestDatabases;

/**
 * On H2.
 */
class H2DataSourceTransactionTest extends DataSourceTransactionTests {

	H2DataSourceTransactionTest() {
		super(TestDatabases.h2(), "h2");
	}

}
