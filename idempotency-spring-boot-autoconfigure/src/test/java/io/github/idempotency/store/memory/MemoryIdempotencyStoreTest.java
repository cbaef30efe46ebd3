package io.github.idempotency.store.memory;

import java.time.Clock;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.IdempotencyStoreContract;

class MemoryIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new MemoryIdempotencyStore(clock);
	}

}
