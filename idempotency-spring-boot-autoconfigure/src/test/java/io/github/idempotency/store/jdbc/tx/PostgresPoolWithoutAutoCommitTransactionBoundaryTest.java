package io.github.idempotency.store.jdbc.tx;

import io.github.idempotency.testservers.TestServers;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

class PostgresPoolWithoutAutoCommitTransactionBoundaryTest extends PoolWithoutAutoCommitTransactionBoundaryTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestServers::postgresUrl);
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
	}

}
