package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/**
 * The same HTTP behaviour on the jdbc backend (H2): stored responses and failures survive
 * the round trip through the table, racing duplicates meet on its row locks.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=jdbc", "idempotency.web.principal=#request.getHeader('X-User')",
				"spring.datasource.url=jdbc:h2:mem:web-idempotency;DB_CLOSE_DELAY=-1",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class H2JdbcWebIdempotencyTest extends WebIdempotencyTest {

	@Override
	protected String backend() {
		return "jdbc";
	}

}
