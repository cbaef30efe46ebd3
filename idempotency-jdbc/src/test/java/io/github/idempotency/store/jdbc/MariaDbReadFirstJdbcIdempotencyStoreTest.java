package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.time.Clock;
import java.time.Duration;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.TestDatabases;

/** The contract with every claim reading first ({@link ReadFirst#ALWAYS}). */
class MariaDbReadFirstJdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(TestDatabases.mariaDb(), "idempotency_record",
				Duration.ofSeconds(5), clock);
		store.setReadFirst(ReadFirst.ALWAYS);
		return store;
	}

}
