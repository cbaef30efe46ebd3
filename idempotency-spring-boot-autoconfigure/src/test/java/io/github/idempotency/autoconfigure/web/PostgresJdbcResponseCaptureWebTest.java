package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What the client received, stored on the jdbc backend on PostgreSQL.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=jdbc",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class PostgresJdbcResponseCaptureWebTest extends ResponseCaptureWebTest {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		PostgresJdbcReactiveWebIdempotencyTest.emptyTable(registry, "idempotency_capture_test");
	}

}
