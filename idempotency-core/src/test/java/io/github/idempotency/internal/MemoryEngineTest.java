package io.github.idempotency.internal;

import java.time.Clock;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

class MemoryEngineTest extends EngineSuites {

	@Override
	protected IdempotencyStore store(Clock clock) {
		return new MemoryIdempotencyStore(clock);
	}

}
