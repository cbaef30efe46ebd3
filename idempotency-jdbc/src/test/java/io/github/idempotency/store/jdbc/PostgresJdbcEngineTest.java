package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

import io.github.idempotency.internal.BatchesHoldingEachOthersKeysSuite;
import io.github.idempotency.internal.ProtocolBehaviourSuite;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.testservers.TestDatabases;

/**
 * The engine's suites on the jdbc store and PostgreSQL.
 */
class PostgresJdbcEngineTest {

	private static final String TABLE = "engine_suites";

	@BeforeAll
	static void createTable() {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
	}

	static JdbcIdempotencyStore store(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.postgres(), TABLE, Duration.ofSeconds(5), clock);
	}

	@Nested
	class Protocol extends ProtocolBehaviourSuite {

		@Override
		protected IdempotencyStore store(Clock clock) {
			return PostgresJdbcEngineTest.store(clock);
		}

	}

	@Nested
	class BatchesHoldingEachOthersKeys extends BatchesHoldingEachOthersKeysSuite {

		@Override
		protected IdempotencyStore store() {
			return PostgresJdbcEngineTest.store(Clock.systemUTC());
		}

	}

}
