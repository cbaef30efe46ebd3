package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;

/**
 * The WebFlux HTTP behaviour on the jdbc backend, on PostgreSQL: every store call on the
 * bounded scheduler, racing duplicates meeting on the table's rows.
 */
@SpringBootTest(classes = ReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				"idempotency.backend=jdbc",
				"idempotency.web.principal=#request.headers.getFirst('X-User')",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class PostgresJdbcReactiveWebIdempotencyTest extends ReactiveWebIdempotencyTest {

	private static final String TABLE = "idempotency_webflux_test";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		emptyTable(registry, TABLE);
	}

	/** The jdbc store on PostgreSQL, in {@code table}, emptied: the tests' keys are fixed. */
	static void emptyTable(DynamicPropertyRegistry registry, String table) {
		new JdbcTemplate(TestDatabases.postgres()).execute("DROP TABLE IF EXISTS " + table);
		registry.add("spring.datasource.url", TestServers::postgresUrl);
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
		registry.add("idempotency.jdbc.table-name", () -> table);
	}

	@Override
	protected String backend() {
		return "jdbc";
	}

}
