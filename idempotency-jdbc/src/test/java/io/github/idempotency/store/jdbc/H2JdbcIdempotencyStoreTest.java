package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.TestDatabases;

class H2JdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.h2(), "idempotency_record", Duration.ofSeconds(5), clock);
	}

}
