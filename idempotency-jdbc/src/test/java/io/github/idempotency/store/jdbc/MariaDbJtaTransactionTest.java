package io.github.idempotency.store.jdbc;

import java.sql.SQLException;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;

/**
 * On MariaDB.
 */
class MariaDbJtaTransactionTest extends JtaTransactionTests {

	MariaDbJtaTransactionTest() throws SQLException {
		super(TestDatabases.mariaDb(), TestServers.mariaDbUrl(), "mysql");
	}

}
