package io.github.idempotency.internal;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

class MemoryBatchesHoldingEachOthersKeysTest extends BatchesHoldingEachOthersKeysSuite {

	@Override
	protected IdempotencyStore store() {
		return new MemoryIdempotencyStore();
	}

}
