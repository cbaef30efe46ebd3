package io.github.idempotency.store.jdbc.tx;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

class H2TransactionBoundaryTest extends TransactionBoundaryTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", () -> "jdbc:h2:mem:transaction-boundary;DB_CLOSE_DELAY=-1");
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
	}

}
