package io.github.idempotency.test;

import java.time.Clock;

import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

/**
 * The memory store, which never waits on a server, seen as a non-blocking store
 * ({@link ReactiveIdempotencyStore#of}) against the non-blocking contract: the kit proves
 * itself.
 */
class ReactiveMemoryIdempotencyStoreTest extends ReactiveIdempotencyStoreContract {

	@Override
	protected ReactiveIdempotencyStore createReactiveStore(Clock clock) {
		return ReactiveIdempotencyStore.of(new MemoryIdempotencyStore(clock), Schedulers.immediate());
	}

}
