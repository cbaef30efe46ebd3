package io.github.idempotency.store.jdbc;

import java.time.Clock;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.IdempotencyStoreContract;
import io.github.idempotency.testsupport.TestDatabases;

class H2JdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return TestDatabases.store(TestDatabases.h2(), clock);
	}

}
