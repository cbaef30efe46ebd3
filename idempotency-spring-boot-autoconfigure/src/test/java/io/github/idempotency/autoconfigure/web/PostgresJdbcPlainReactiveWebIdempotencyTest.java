package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

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
		PostgresJdbcReactiveWebIdempotencyTest.emptyTable(registry, TABLE);
	}

	@Override
	protected String backend() {
		return "jdbc";
	}

}
