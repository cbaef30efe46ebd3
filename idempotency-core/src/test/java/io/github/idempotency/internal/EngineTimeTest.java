package io.github.idempotency.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.testfixtures.CountingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Leases, waits and retries on the engine's time ({@link ManualTime}): minutes of leases,
 * waits and backoffs pass without a millisecond of real time, so nothing here depends on
 * how fast the machine is.
 */
class EngineTimeTest {

	private static final String WORKFLOW = "payment";

	private final ManualTime time = new ManualTime(Instant.parse("2026-01-01T00:00:00Z"));

	private final CountingIdempotencyStore store = new CountingIdempotencyStore(
			new MemoryIdempotencyStore(this.time));

	private final IdempotencyEngine engine = IdempotencyEngine.builder(this.store, JsonMapper.builder().build())
		.settings(EngineSettings.builder()
			.leaseTtl(Duration.ofSeconds(30))
			.leaseRenewalInterval(Duration.ofSeconds(10))
			.waitTimeout(Duration.ofSeconds(45))
			.build())
		.time(this.time)
		.build();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		this.engine.close();
	}

	@Test
	void aRunningClaimIsRenewedEveryIntervalSoAnotherRunNeverTakesItOver() throws Exception {
		IdempotentOperation operation = operation(InProgressPolicy.REJECT);
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<@Nullable Object> running = CompletableFuture.supplyAsync(() -> execute(operation, "k1", () -> {
			started.countDown();
			release.await();
			return "done";
		}), this.threads);
		assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
		for (int second = 0; second < 95; second += 5) {
			this.time.advance(Duration.ofSeconds(5));
		}
		// 95 s: three leases long, renewed all along
		assertThat(this.store.calls("renew")).isEqualTo(9);
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> this.engine.execute(operation, "k1", null, () -> "elsewhere"));
		release.countDown();
		assertThat(running.get(30, TimeUnit.SECONDS)).isEqualTo("done");
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aConflictIsWaitedForUntilTheWaitTimeoutOnTheEnginesTime() throws Exception {
		IdempotentOperation operation = operation(InProgressPolicy.WAIT);
		assertThat(this.store.claim(new ClaimRequest(new RecordId(WORKFLOW, "k1"), "elsewhere", null,
				Duration.ofMinutes(5), Duration.ofHours(1))).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		CompletableFuture<@Nullable Object> waiting = CompletableFuture
			.supplyAsync(() -> execute(operation, "k1", () -> "ran"), this.threads);
		int sleeps = 0;
		while (!waiting.isDone()) {
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(1))
				.until(() -> this.time.sleepers() > 0 || waiting.isDone());
			this.time.advance(Duration.ofMillis(500));
			sleeps++;
			if (sleeps > 1000) {
				throw new AssertionError("the wait did not end");
			}
		}
		assertThat(waiting).failsWithin(Duration.ofSeconds(30))
			.withThrowableOfType(java.util.concurrent.ExecutionException.class)
			.withRootCauseInstanceOf(IdempotencyInProgressException.class);
		// polled with backoff (5 ms doubling to 500 ms) for the 45 s wait timeout
		assertThat(this.store.calls("claim")).isBetween(90, 100);
	}

	@Test
	void aResultTheStoreFailsToTakeIsRetriedWithBackoffUntilItLands() throws Exception {
		IdempotentOperation operation = operation(InProgressPolicy.REJECT);
		this.store.failCalls("complete", 5);
		CompletableFuture<@Nullable Object> running = CompletableFuture
			.supplyAsync(() -> execute(operation, "k1", () -> "done"), this.threads);
		for (int retry = 0; retry < 5; retry++) {
			this.time.awaitSleepers(1);
			this.time.advance(Duration.ofMillis(500));
		}
		assertThat(running.get(30, TimeUnit.SECONDS)).isEqualTo("done");
		assertThat(this.store.calls("complete")).isEqualTo(6);
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
	}

	private IdempotentOperation operation(InProgressPolicy onInProgress) {
		return this.engine.prepare(OperationDefinition.of(WORKFLOW, String.class)
			.fingerprinted(false)
			.onInProgress(onInProgress)
			.build());
	}

	private @Nullable Object execute(IdempotentOperation operation, String key, Body body) {
		try {
			return this.engine.execute(operation, key, null, body::run);
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private RecordStatus status(String key) {
		return this.store.find(new RecordId(WORKFLOW, key)).orElseThrow().status();
	}

	@FunctionalInterface
	interface Body {

		@Nullable Object run() throws Exception;

	}

}
