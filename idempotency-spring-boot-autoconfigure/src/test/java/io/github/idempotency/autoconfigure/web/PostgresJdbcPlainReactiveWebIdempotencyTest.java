package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;

/**
 * WebFlux handler methods with plain results on the jdbc backend, on PostgreSQL: every
 * store call on the blocking executor's threads, racing duplicates meeting on the table's
 * rows.
 */
@SpringBootTest(classes = { PlainReactiveWebTestApplication.class, BlockingExecution.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				PlainReactiveWebTestApplication.PROPAGATION, "idempotency.backend=jdbc",
				"idempotency.web.principal=#request.headers.getFirst('X-User')",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class PostgresJdbcPlainReactiveWebIdempotencyTest extends PlainReactiveWebIdempotencyTest {

	private static final String TABLE = "idempotency_webflux_plain_test";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		// the keys are fixed: each run starts from an empty table
		new JdbcTemplate(TestDatabases.postgres()).execute("DROP TABLE IF EXISTS " + TABLE);
		registry.add("spring.datasource.url", TestServers::postgresUrl);
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
		registry.add("idempotency.jdbc.table-name", () -> TABLE);
	}

	@Override
	protected String backend() {
		return "jdbc";
	}

}
