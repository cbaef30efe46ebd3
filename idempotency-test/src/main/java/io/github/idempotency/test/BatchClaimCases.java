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
import io.github.idempotency.test.IdempotencyStoreContract.CardDeclinedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static io.github.idempotency.test.IdempotencyStoreContract.RETENTION;
import static io.github.idempotency.test.IdempotencyStoreContract.RETRYABLE;
import static io.github.idempotency.test.IdempotencyStoreContract.THREADS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batch claims ({@code claimAll}): each request answered at its position with every outcome,
 * each claim's own lease, expiry and fingerprint stored, a key named twice acquired once, and
 * overlapping batches racing acquire each key once.
 */
interface BatchClaimCases extends ContractFixture {

	@Test
	default void claimAllAnswersEachRequestAtItsPosition() {
		claim("done", "owner-done", null);
		handle("owner-done").complete("\"stored\"");
		claim("failed", "owner-failed", null);
		handle("owner-failed").fail(new CardDeclinedException("declined"));
		claim("running", "owner-running", null);
		claim("reused", "owner-reused", "fp-1");
		handle("owner-reused").complete(null);
		List<ClaimResult> results = store().claimAll(List.of(request(id("new-1"), "batch-1", null),
				request(id("done"), "batch-2", null), request(id("failed"), "batch-3", null),
				request(id("running"), "batch-4", null), request(id("reused"), "batch-5", "fp-2"),
				request(id("new-2"), "batch-6", null)));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.FAILED,
					ClaimOutcome.IN_PROGRESS, ClaimOutcome.MISMATCH, ClaimOutcome.ACQUIRED);
		assertThat(results.get(0).record().owner()).isEqualTo("batch-1");
		assertThat(results.get(1).record().response()).isEqualTo("\"stored\"");
		assertThat(results.get(2).record().errorMessage()).isEqualTo("declined");
		assertThat(results.get(3).record().owner()).isEqualTo("owner-running");
		assertThat(results.get(0).acquiredHandle().complete("\"one\"")).isTrue();
		assertThat(results.get(5).acquiredHandle().release(RETRYABLE)).isTrue();
		assertThat(store().find(id("new-1")).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(store().find(id("new-2"))).isEmpty();
		assertThat(store().claimAll(List.of())).isEmpty();
	}

	/**
	 * A batch claim stores each claim's own lease, expiry and fingerprint, whether the
	 * claims are alike (one workflow, lease, retention and fingerprint: a store may send
	 * those once) or each differs; a lease ends when its own claim says.
	 * @param alike whether the batch's claims are alike
	 */
	@ParameterizedTest(name = "alike: {0}")
	@ValueSource(booleans = { true, false })
	default void claimAllStoresEachClaimsOwnLeaseExpiryAndFingerprint(boolean alike) {
		Instant now = clock().instant();
		List<ClaimRequest> requests = new ArrayList<>();
		// apart, the second claim's lease ends first
		List<Duration> leases = alike ? List.of(LEASE, LEASE, LEASE)
				: List.of(LEASE.plusSeconds(20), LEASE, LEASE.plusSeconds(10));
		for (int i = 0; i < 3; i++) {
			Duration lease = leases.get(i);
			Duration retention = alike ? RETENTION : RETENTION.plusMinutes(i);
			String fingerprint = alike ? "fp" : (i == 1) ? null : "fp-" + i;
			requests.add(new ClaimRequest(id("own-" + i), "batch-" + i, fingerprint, lease, retention));
		}
		assertThat(store().claimAll(requests)).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		for (ClaimRequest request : requests) {
			IdempotencyRecord stored = store().find(request.id()).orElseThrow();
			assertThat(stored.owner()).isEqualTo(request.owner());
			assertThat(stored.fingerprint()).as(request.owner()).isEqualTo(request.fingerprint());
			assertThat(stored.leaseUntil()).as(request.owner()).isEqualTo(now.plus(request.leaseTtl()));
			assertThat(stored.expiresAt()).as(request.owner())
				.isEqualTo(now.plus(request.leaseTtl()).plus(request.retention()));
		}
		clock().advance(requests.get(1).leaseTtl().plusMillis(1));
		List<ClaimResult> later = store().claimAll(List.of(request(id("own-0"), "later-0", null),
				request(id("own-1"), "later-1", null), request(id("own-2"), "later-2", null)));
		assertThat(later).extracting(ClaimResult::isTakeover).containsExactly(alike, true, alike);
	}

	@Test
	default void claimAllAcquiresAKeyNamedTwiceOnce() {
		List<ClaimResult> results = store().claimAll(List.of(request(id("twice"), "first", null),
				request(id("other"), "other", null), request(id("twice"), "second", null)));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(results.get(2).record().owner()).isEqualTo("first");
		assertThat(results.get(0).acquiredHandle().complete(null)).isTrue();
		assertThat(store().find(id("twice")).orElseThrow().owner()).isEqualTo("first");
	}

	@Test
	default void claimAllAnswersEveryOutcomeAtItsPosition() {
		claim("expired", "owner-expired", null);
		handle("owner-expired").complete("\"old\"");
		clock().advance(RETENTION.plusSeconds(1));
		claim("crashed", "owner-crashed", "fp-1");
		assertThat(handle("owner-crashed").saveRecoveryPoint("stock-reserved")).isTrue();
		clock().advance(LEASE.plusSeconds(1));
		claim("done", "owner-done", null);
		handle("owner-done").complete("\"stored\"");
		claim("failed", "owner-failed", null);
		handle("owner-failed").fail(new CardDeclinedException("declined"));
		claim("reused", "owner-reused", "fp-1");
		handle("owner-reused").complete(null);
		claim("running", "owner-running", null);
		List<ClaimResult> results = store().claimAll(List.of(request(id("new"), "batch-new", "fp-n"),
				request(id("done"), "batch-done", null), request(id("failed"), "batch-failed", null),
				request(id("reused"), "batch-reused", "fp-2"), request(id("running"), "batch-running", null),
				request(id("expired"), "batch-expired", null), request(id("crashed"), "batch-crashed", "fp-1"),
				request(id("new"), "batch-new-again", "fp-n")));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.FAILED, ClaimOutcome.MISMATCH,
					ClaimOutcome.IN_PROGRESS, ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(results).extracting((result) -> result.record().id().key())
			.containsExactly("new", "done", "failed", "reused", "running", "expired", "crashed", "new");
		assertThat(results.get(0).record().owner()).isEqualTo("batch-new");
		assertThat(results.get(0).record().attempt()).isEqualTo(1);
		assertThat(results.get(1).record().response()).isEqualTo("\"stored\"");
		assertThat(results.get(2).record().errorType()).isEqualTo(CardDeclinedException.class.getName());
		assertThat(results.get(2).record().errorMessage()).isEqualTo("declined");
		assertThat(results.get(3).record().fingerprint()).isEqualTo("fp-1");
		assertThat(results.get(4).record().owner()).isEqualTo("owner-running");
		assertThat(results.get(5).isTakeover()).isFalse();
		assertThat(results.get(5).record().attempt()).isEqualTo(1);
		assertThat(results.get(5).record().response()).isNull();
		assertThat(results.get(6).isTakeover()).isTrue();
		assertThat(results.get(6).record().attempt()).isEqualTo(2);
		assertThat(results.get(6).record().owner()).isEqualTo("batch-crashed");
		assertThat(results.get(6).record().recoveryPoint()).isEqualTo("stock-reserved");
		assertThat(results.get(7).record().owner()).as("the same key twice is acquired once").isEqualTo("batch-new");
		assertThat(handle("owner-crashed").complete("\"late\"")).as("the crashed run's claim is fenced").isFalse();
		for (String key : List.of("new", "expired", "crashed")) {
			ClaimResult later = claim(key, "later-" + key, null);
			assertThat(later.outcome()).as(key).isEqualTo(ClaimOutcome.IN_PROGRESS);
			assertThat(later.record().owner()).isEqualTo("batch-" + key);
		}
		List<ClaimHandle> acquired = List.of(results.get(0).acquiredHandle(), results.get(5).acquiredHandle(),
				results.get(6).acquiredHandle());
		assertThat(store().completeAll(acquired, Arrays.asList("\"new\"", null, "\"crashed\"")))
			.containsExactly(true, true, true);
		assertThat(store().find(id("new")).orElseThrow().response()).isEqualTo("\"new\"");
		assertThat(store().find(id("expired")).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(store().find(id("crashed")).orElseThrow().attempt()).isEqualTo(2);
		assertThat(store().find(id("running")).orElseThrow().owner()).isEqualTo("owner-running");
	}

	@Test
	default void racingOverlappingBatchesAcquireEachKeyOnce() throws Exception {
		int keys = 64;
		int batchSize = 24;
		for (int round = 0; round < 3; round++) {
			String prefix = "batch-" + round + "-";
			List<List<ClaimResult>> results = race(THREADS, (thread) -> {
				List<ClaimRequest> requests = new ArrayList<>();
				for (int i = 0; i < batchSize; i++) {
					// each thread's window overlaps its neighbours'
					String key = prefix + ((thread * 4 + i) % keys);
					requests.add(request(id(key), "owner-" + thread + "-" + i, null));
				}
				Collections.shuffle(requests);
				List<ClaimResult> claimed = store().claimAll(requests);
				for (int i = 0; i < claimed.size(); i++) {
					assertThat(claimed.get(i).record().id()).isEqualTo(requests.get(i).id());
				}
				return claimed;
			});
			Map<RecordId, AtomicInteger> acquired = new ConcurrentHashMap<>();
			for (List<ClaimResult> batch : results) {
				for (ClaimResult result : batch) {
					if (result.outcome() == ClaimOutcome.ACQUIRED) {
						acquired.computeIfAbsent(result.record().id(), (id) -> new AtomicInteger()).incrementAndGet();
					}
					else {
						assertThat(result.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
					}
				}
			}
			assertThat(acquired).hasSize(keys).allSatisfy((id, count) -> assertThat(count).hasValue(1));
		}
	}

}
