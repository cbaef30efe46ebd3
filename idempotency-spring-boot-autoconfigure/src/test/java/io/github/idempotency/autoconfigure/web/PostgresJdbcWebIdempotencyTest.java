package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Spring MVC HTTP behaviour on the jdbc backend, on PostgreSQL.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=jdbc", "idempotency.web.principal=#request.getHeader('X-User')",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class PostgresJdbcWebIdempotencyTest extends WebIdempotencyTest {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		PostgresJdbcReactiveWebIdempotencyTest.emptyTable(registry, "idempotency_webmvc_test");
	}

	@Override
	protected String backend() {
		return "jdbc";
	}

}
