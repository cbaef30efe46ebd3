package io.github.idempotency.store.r2dbc;

import java.time.Clock;
import java.time.Duration;

import io.github.idempotency.internal.EngineSuites;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;

/**
 * Every suite of the engine on the r2dbc store (PostgreSQL): the blocking shapes through its
 * blocking view, the asynchronous ones on its own non-blocking side.
 */
class PostgresR2dbcEngineTest extends EngineSuites {

	@Override
	protected IdempotencyStore store(Clock clock) {
		return ReactiveIdempotencyStore.blocking(reactiveStore(clock));
	}

	@Override
	protected ReactiveIdempotencyStore reactiveStore(Clock clock) {
		return new R2dbcIdempotencyStore(R2dbcTestDatabases.postgres(), "idempotency_record", Duration.ofSeconds(5), clock);
	}

}
