package io.github.idempotency.test;

import java.time.Clock;

import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.store.IdempotencyStore;

/**
 * The memory store against the shared contract: the shape README's "Writing your own
 * store" snippet shows for a third-party store.
 */
class MemoryIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new MemoryIdempotencyStore(clock);
	}

}
