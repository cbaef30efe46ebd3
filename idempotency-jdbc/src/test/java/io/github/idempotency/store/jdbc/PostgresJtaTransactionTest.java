package io.github.idempotency.store.jdbc;

import java.sql.SQLException;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;

/**
 * On PostgreSQL.
 */
class PostgresJtaTransactionTest extends JtaTransactionTests {

	PostgresJtaTransactionTest() throws SQLException {
		super(TestDatabases.postgres(), TestServers.postgresUrl(), "postgresql");
	}

}
