package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.internal.EngineSuites;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.testservers.TestDatabases;

class MariaDbJdbcEngineTest extends EngineSuites {

	@BeforeAll
	static void createTable() {
		TestDatabases.createTable(TestDatabases.mariaDb(), "mysql", "engine_suites");
	}

	@Override
	protected IdempotencyStore store(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.mariaDb(), "engine_suites", Duration.ofSeconds(5), clock);
	}

}
