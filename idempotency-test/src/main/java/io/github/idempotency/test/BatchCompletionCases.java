package io.github.idempotency.test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static io.github.idempotency.test.IdempotencyStoreContract.RETENTION;
import static io.github.idempotency.test.IdempotencyStoreContract.THREADS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batch completions ({@code completeAll}): fenced per claim, each response stored as given,
 * a batch of several workflows, leases and retentions completed as each claim alone, and
 * racing batches that complete what they acquired run each key once.
 */
interface BatchCompletionCases extends ContractFixture {

	/**
	 * A batch may name several workflows, leases and retentions, in any order (a store
	 * that sends what its claims share once groups them): each claim is answered at its
	 * position, stored and completed as it would be alone.
	 */
	@Test
	default void aBatchOfSeveralWorkflowsLeasesAndRetentionsIsClaimedAndCompletedAsEachAlone() {
		String other = workflow() + "-other";
		store().claim(request(new RecordId(other, "done"), "earlier", null)).acquiredHandle().complete("\"done\"");
		Instant now = clock().instant();
		Duration shortLease = Duration.ofSeconds(5);
		List<ClaimRequest> requests = List.of(new ClaimRequest(new RecordId(other, "m-0"), "m-0", null, LEASE, RETENTION),
				new ClaimRequest(id("m-1"), "m-1", null, shortLease, RETENTION),
				request(new RecordId(other, "done"), "again", null),
				new ClaimRequest(id("m-3"), "m-3", null, LEASE, RETENTION.plusHours(1)),
				new ClaimRequest(new RecordId(other, "m-4"), "m-4", null, shortLease, RETENTION.plusHours(2)));
		List<ClaimResult> results = store().claimAll(requests);
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE,
					ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED);
		assertThat(results.get(2).record().response()).isEqualTo("\"done\"");
		for (int i : List.of(0, 1, 3, 4)) {
			ClaimRequest request = requests.get(i);
			IdempotencyRecord stored = store().find(request.id()).orElseThrow();
			assertThat(stored.owner()).isEqualTo(request.owner());
			assertThat(stored.leaseUntil()).as(request.owner()).isEqualTo(now.plus(request.leaseTtl()));
			assertThat(stored.expiresAt()).as(request.owner())
				.isEqualTo(now.plus(request.leaseTtl()).plus(request.retention()));
		}
		// the short leases run out: one is taken over, the other finishes late
		clock().advance(shortLease.plusSeconds(5));
		assertThat(store().claim(request(id("m-1"), "taker", null)).isTakeover()).isTrue();
		Instant finishedAt = clock().instant();
		List<Integer> order = List.of(4, 1, 3, 0);
		assertThat(store().completeAll(order.stream().map((i) -> results.get(i).acquiredHandle()).toList(),
				order.stream().map((i) -> "\"" + i + "\"").toList()))
			.containsExactly(true, false, true, true);
		for (int i : List.of(0, 3, 4)) {
			ClaimRequest request = requests.get(i);
			IdempotencyRecord stored = store().find(request.id()).orElseThrow();
			assertThat(stored.status()).as(request.owner()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(stored.response()).as(request.owner()).isEqualTo("\"" + i + "\"");
			Instant leaseEnd = now.plus(request.leaseTtl());
			assertThat(stored.expiresAt()).as(request.owner())
				.isBetween(finishedAt.plus(request.retention()),
						(leaseEnd.isAfter(finishedAt) ? leaseEnd : finishedAt).plus(request.retention()));
		}
		IdempotencyRecord taken = store().find(id("m-1")).orElseThrow();
		assertThat(taken.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(taken.owner()).isEqualTo("taker");
	}

	@Test
	default void completeAllIsFencedPerClaim() {
		List<ClaimResult> claimed = store().claimAll(List.of(request(id("a"), "batch-a", null),
				new ClaimRequest(id("b"), "batch-b", null, Duration.ofSeconds(1), RETENTION),
				request(id("c"), "batch-c", null)));
		assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		clock().advance(Duration.ofSeconds(2));
		ClaimResult takeover = claim("b", "taker", null);
		assertThat(takeover.isTakeover()).isTrue();
		List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
		// not in key order: each answer and each response belongs to the handle at its position
		assertThat(store().completeAll(List.of(handles.get(1), handles.get(0), handles.get(2)),
				Arrays.asList("\"b\"", "\"a\"", null)))
			.containsExactly(false, true, true);
		assertThat(store().find(id("a")).orElseThrow().response()).isEqualTo("\"a\"");
		IdempotencyRecord taken = store().find(id("b")).orElseThrow();
		assertThat(taken.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(taken.owner()).isEqualTo("taker");
		assertThat(taken.response()).isNull();
		ClaimResult voidDuplicate = claim("c", "again", null);
		assertThat(voidDuplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(voidDuplicate.record().response()).isNull();
		assertThat(store().completeAll(List.of(handles.get(0), handles.get(2)), Arrays.asList("\"x\"", "\"y\"")))
			.as("finished records stay as they are")
			.containsExactly(false, false);
		assertThat(store().find(id("a")).orElseThrow().response()).isEqualTo("\"a\"");
		assertThat(handle("taker").complete("\"taker\"")).isTrue();
		assertThat(claim("b", "last", null).record().response()).isEqualTo("\"taker\"");
		assertThat(store().completeAll(List.of(), List.of())).isEmpty();
	}

	@Test
	default void completeAllStoresEachResponseAsGiven() {
		List<String> responses = Arrays.asList("\"a,b\"", "{\"k\":\"{x}\"}", "\"back\\\\slash \\\"quoted\\\"\"",
				"\"\u00e9\u20ac\ud83d\ude00\"", "", "NULL", null);
		List<ClaimRequest> requests = new ArrayList<>();
		for (int i = 0; i < responses.size(); i++) {
			// the keys in the reverse of the order given
			requests.add(request(id("response-" + (responses.size() - i)), "batch-" + i, null));
		}
		List<ClaimHandle> handles = store().claimAll(requests).stream().map(ClaimResult::acquiredHandle).toList();
		assertThat(store().completeAll(handles, responses)).containsOnly(true);
		for (int i = 0; i < responses.size(); i++) {
			assertThat(store().find(id("response-" + (responses.size() - i))).orElseThrow().response())
				.as(String.valueOf(i))
				.isEqualTo(responses.get(i));
		}
	}

	@Test
	default void racingBatchesThatCompleteWhatTheyAcquiredRunEachKeyOnce() throws Exception {
		int keys = 48;
		Map<RecordId, AtomicInteger> runs = new ConcurrentHashMap<>();
		Map<RecordId, String> runners = new ConcurrentHashMap<>();
		race(THREADS, (thread) -> {
			for (int round = 0; round < 4; round++) {
				List<ClaimRequest> requests = new ArrayList<>();
				for (int i = 0; i < 16; i++) {
					// each thread's window overlaps its neighbours' and its own earlier ones
					String key = "k" + ((thread * 3 + round * 5 + i) % keys);
					requests.add(request(id(key), "owner-" + thread + "-" + round + "-" + i, null));
				}
				requests.add(request(requests.get(0).id(), "owner-" + thread + "-" + round + "-again", null));
				Collections.shuffle(requests);
				List<ClaimResult> results = store().claimAll(requests);
				List<ClaimHandle> acquired = new ArrayList<>();
				List<@Nullable String> responses = new ArrayList<>();
				for (int i = 0; i < results.size(); i++) {
					ClaimResult result = results.get(i);
					assertThat(result.record().id()).isEqualTo(requests.get(i).id());
					if (result.outcome() == ClaimOutcome.ACQUIRED) {
						String owner = requests.get(i).owner();
						runs.computeIfAbsent(result.record().id(), (id) -> new AtomicInteger()).incrementAndGet();
						runners.put(result.record().id(), owner);
						acquired.add(result.acquiredHandle());
						responses.add("\"" + owner + "\"");
					}
					else if (result.outcome() == ClaimOutcome.DUPLICATE) {
						assertThat(result.record().response()).startsWith("\"owner-");
					}
					else {
						assertThat(result.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
					}
				}
				assertThat(store().completeAll(acquired, responses)).hasSize(acquired.size()).doesNotContain(false);
			}
			return null;
		});
		assertThat(runs).hasSize(keys).allSatisfy((id, count) -> assertThat(count).hasValue(1));
		runners.forEach((id, owner) -> {
			IdempotencyRecord record = store().find(id).orElseThrow();
			assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(record.response()).isEqualTo("\"" + owner + "\"");
		});
	}

}
