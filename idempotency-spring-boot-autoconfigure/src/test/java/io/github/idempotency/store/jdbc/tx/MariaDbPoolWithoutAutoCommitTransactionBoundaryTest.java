package io.github.idempotency.store.jdbc.tx;

import io.github.idempotency.testservers.TestServers;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

class MariaDbPoolWithoutAutoCommitTransactionBoundaryTest extends PoolWithoutAutoCommitTransactionBoundaryTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestServers::mariaDbUrl);
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
	}

}
