package io.github.idempotency.autoconfigure.web;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The WebFlux HTTP behaviour on the r2dbc backend, on PostgreSQL: the engine's non-blocking
 * path from the claim to the replay, under BlockHound, racing duplicates meeting on the
 * table's rows.
 */
@SpringBootTest(classes = { ReactiveWebTestApplication.class, PostgresR2dbcReactiveWebIdempotencyTest.Database.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				"idempotency.backend=r2dbc", "idempotency.r2dbc.initialize-schema=always",
				"idempotency.web.principal=#request.headers.getFirst('X-User')", PrincipalScopeTest.EXCLUDE })
class PostgresR2dbcReactiveWebIdempotencyTest extends ReactiveWebIdempotencyTest {

	private static final String TABLE = "idempotency_webflux_r2dbc_test";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		// the tests' keys are fixed: a table of their own, emptied
		new JdbcTemplate(TestDatabases.postgres()).execute("DROP TABLE IF EXISTS " + TABLE);
		registry.add("idempotency.r2dbc.table-name", () -> TABLE);
	}

	@Override
	protected String backend() {
		return "r2dbc";
	}

	/** The application's R2DBC connection factory on the test PostgreSQL. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Database {

		@Bean
		ConnectionFactory connectionFactory() {
			return ConnectionFactories.get(TestServers.r2dbcUrl(TestServers.postgresUrl()));
		}

	}

}
