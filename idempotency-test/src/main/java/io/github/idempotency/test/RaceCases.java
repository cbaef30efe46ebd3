package io.github.idempotency.test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordStatus;
import org.junit.jupiter.api.Test;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static io.github.idempotency.test.IdempotencyStoreContract.THREADS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Single claims racing from {@code THREADS} threads: one key acquired once, an expired lease
 * taken over once, and no key run twice among completions and duplicates.
 */
interface RaceCases extends ContractFixture {

	@Test
	default void racingClaimsOfOneKeyAcquireItOnce() throws Exception {
		for (int round = 0; round < 10; round++) {
			String key = "race-" + round;
			List<ClaimResult> results = race(THREADS, (thread) -> claim(key, "owner-" + thread, null));
			assertThat(results).filteredOn((result) -> result.outcome() == ClaimOutcome.ACQUIRED).hasSize(1);
			assertThat(results).filteredOn((result) -> result.outcome() == ClaimOutcome.IN_PROGRESS)
				.hasSize(THREADS - 1);
		}
	}

	@Test
	default void racingTakeoversOfAnExpiredLeaseSucceedOnce() throws Exception {
		for (int round = 0; round < 5; round++) {
			String key = "takeover-" + round;
			claim(key, "crashed", null);
			clock().advance(LEASE.plusSeconds(1));
			List<ClaimResult> results = race(THREADS, (thread) -> claim(key, "owner-" + thread, null));
			assertThat(results).filteredOn((result) -> result.outcome() == ClaimOutcome.ACQUIRED)
				.singleElement()
				.satisfies((result) -> assertThat(result.record().attempt()).isEqualTo(2));
		}
	}

	@Test
	default void racingCompletionsAndDuplicatesNeverRunAKeyTwice() throws Exception {
		int keys = 20;
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		race(THREADS, (thread) -> {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			for (int i = 0; i < 60; i++) {
				String key = "fuzz-" + random.nextInt(keys);
				String owner = "owner-" + thread + "-" + i;
				ClaimResult claim = claim(key, owner, null);
				if (claim.outcome() == ClaimOutcome.ACQUIRED) {
					runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
					assertThat(handle(owner).complete("\"" + owner + "\"")).isTrue();
				}
				else if (claim.outcome() == ClaimOutcome.DUPLICATE) {
					assertThat(claim.record().response()).startsWith("\"owner-");
				}
				else {
					assertThat(claim.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
				}
			}
			return null;
		});
		assertThat(runs.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
		for (String key : runs.keySet()) {
			assertThat(store().find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		}
	}

}
