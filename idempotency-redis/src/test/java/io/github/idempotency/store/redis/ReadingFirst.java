package io.github.idempotency.store.redis;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordId;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Brings a workflow's next batch to read first the way production does: a batch of new
 * keys, completed, then the same batch again (all duplicates). Fifty keys, so that the
 * duplicates bring the workflow's moving share of answered claims
 * ({@link io.github.idempotency.store.ReadFirst.Choices}) above its read-first threshold.
 */
final class ReadingFirst {

	private static final int KEYS = 50;

	private ReadingFirst() {
	}

	static void after(RedisIdempotencyStore store, String workflow) {
		List<ClaimRequest> requests = Stream.generate(() -> request(workflow)).limit(KEYS).toList();
		List<ClaimResult> claimed = store.claimAll(requests);
		store.completeAll(claimed.stream().map(ClaimResult::acquiredHandle).toList(), Collections.nCopies(KEYS, null));
		assertThat(store.claimAll(requests)).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.DUPLICATE);
	}

	private static ClaimRequest request(String workflow) {
		return new ClaimRequest(new RecordId(workflow, "warm-" + UUID.randomUUID()), "owner-" + UUID.randomUUID(), null,
				Duration.ofSeconds(30), Duration.ofHours(1));
	}

}
