package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.Nested;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.TestDatabases;

/**
 * The contract on H2: claims by statement, and (nested) claims that read first.
 */
class H2JdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.h2(), "idempotency_record", Duration.ofSeconds(5), clock);
	}

	@Nested
	class ReadingFirst extends IdempotencyStoreContract {

		@Override
		protected IdempotencyStore createStore(Clock clock) {
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(TestDatabases.h2(), "idempotency_record",
					Duration.ofSeconds(5), clock);
			store.setReadFirst(ReadFirst.ALWAYS);
			return store;
		}

	}

}
