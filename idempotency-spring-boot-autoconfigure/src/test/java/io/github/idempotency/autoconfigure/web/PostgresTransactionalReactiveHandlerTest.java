package io.github.idempotency.autoconfigure.web;

import javax.sql.DataSource;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link TransactionalReactiveHandlerTest} on PostgreSQL (r2dbc-postgresql).
 */
class PostgresTransactionalReactiveHandlerTest extends TransactionalReactiveHandlerTest {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		tables(registry, TestDatabases.postgres(), TestServers.postgresUrl(), "idempotency_webflux_tx_pg");
	}

	@Override
	protected DataSource database() {
		return TestDatabases.postgres();
	}

}
