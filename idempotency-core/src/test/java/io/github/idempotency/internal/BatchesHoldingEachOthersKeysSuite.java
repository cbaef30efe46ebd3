package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two batches that hold each other's keys never wait for each other: a batch gives back
 * what it acquired while it waits for a key that runs elsewhere. The first claims of both
 * batches are split around a barrier, so that each holds one key and finds the other's in
 * progress; with a wait timeout of ten minutes, both finish at once, each key run once.
 * Each store runs it in a subclass of a few lines.
 */
public abstract class BatchesHoldingEachOthersKeysSuite {

	/**
	 * The store under test.
	 */
	protected abstract IdempotencyStore store();

	@Test
	void bothFinishWithoutWaitingOutTheWaitTimeoutAndEachKeyRunsOnce() throws Exception {
		SplitFirstClaims store = new SplitFirstClaims(store());
		EngineSettings settings = EngineSettings.builder()
			.onInProgress(InProgressPolicy.WAIT)
			.waitTimeout(Duration.ofMinutes(10))
			.build();
		String workflow = "batch-" + UUID.randomUUID();
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try (IdempotencyEngine engine = new IdempotencyEngine(store, JsonMapper.builder().build(), settings,
				IdempotencyObserver.NONE)) {
			IdempotencyTemplate template = new DefaultIdempotencyTemplate(engine);
			List<Future<List<String>>> batches = new ArrayList<>();
			for (List<String> keys : List.of(List.of("k1", "k2"), List.of("k2", "k1"))) {
				batches.add(threads.submit(() -> template.executeAll(
						keys.stream().map((key) -> IdempotentRequest.of(workflow, key)).toList(), String.class,
						(request) -> {
							runs.computeIfAbsent((String) request.key(), (key) -> new AtomicInteger()).incrementAndGet();
							return "ran " + request.key();
						})));
			}
			// far below the wait timeout: a batch that sat on its key would wait ten minutes
			assertThat(batches.get(0).get(60, TimeUnit.SECONDS)).containsExactly("ran k1", "ran k2");
			assertThat(batches.get(1).get(60, TimeUnit.SECONDS)).containsExactly("ran k2", "ran k1");
		}
		finally {
			threads.shutdownNow();
		}
		// both first claims were split, and the batches claimed again after giving back
		assertThat(store.split.get()).isGreaterThan(2);
		assertThat(runs).containsOnlyKeys("k1", "k2").allSatisfy((key, count) -> assertThat(count).hasValue(1));
	}

	/**
	 * Splits the first {@code claimAll} of each of two batches into two halves around a
	 * barrier: each batch claims its first key, then both claim their second.
	 */
	private static final class SplitFirstClaims implements IdempotencyStore {

		private final IdempotencyStore delegate;

		private final CyclicBarrier barrier = new CyclicBarrier(2);

		final AtomicInteger split = new AtomicInteger();

		SplitFirstClaims(IdempotencyStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public ClaimResult claim(ClaimRequest request) {
			return this.delegate.claim(request);
		}

		@Override
		public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
			if (requests.size() < 2 || this.split.incrementAndGet() > 2) {
				return this.delegate.claimAll(requests);
			}
			List<ClaimResult> results = new ArrayList<>(this.delegate.claimAll(requests.subList(0, 1)));
			try {
				this.barrier.await(30, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
			results.addAll(this.delegate.claimAll(requests.subList(1, requests.size())));
			return results;
		}

		@Override
		public List<Boolean> completeAll(List<io.github.idempotency.store.ClaimHandle> handles,
				List<@org.jspecify.annotations.Nullable String> responses) {
			return this.delegate.completeAll(handles, responses);
		}

		@Override
		public Optional<IdempotencyRecord> find(RecordId id) {
			return this.delegate.find(id);
		}

		@Override
		public boolean delete(RecordId id) {
			return this.delegate.delete(id);
		}

		@Override
		public String backend() {
			return this.delegate.backend();
		}

	}

}
