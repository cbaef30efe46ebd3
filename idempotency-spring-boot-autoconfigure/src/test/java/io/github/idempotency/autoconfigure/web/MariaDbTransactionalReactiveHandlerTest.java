package io.github.idempotency.autoconfigure.web;

import javax.sql.DataSource;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link TransactionalReactiveHandlerTest} on MariaDB (r2dbc-mariadb).
 */
class MariaDbTransactionalReactiveHandlerTest extends TransactionalReactiveHandlerTest {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		tables(registry, TestDatabases.mariaDb(), TestServers.mariaDbUrl(), "idempotency_webflux_tx_maria");
	}

	@Override
	protected DataSource database() {
		return TestDatabases.mariaDb();
	}

}
