package io.github.idempotency.store.r2dbc;

import java.time.Clock;
import java.time.Duration;

import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.test.ReactiveIdempotencyStoreContract;

class PostgresR2dbcIdempotencyStoreTest extends ReactiveIdempotencyStoreContract {

	@Override
	protected ReactiveIdempotencyStore createReactiveStore(Clock clock) {
		return new R2dbcIdempotencyStore(R2dbcTestDatabases.postgres(), "idempotency_record", Duration.ofSeconds(5), clock);
	}

}
