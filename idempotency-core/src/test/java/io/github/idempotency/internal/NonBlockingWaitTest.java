package io.github.idempotency.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import org.springframework.core.ResolvableType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdempotencyEngine#executeAsync}: a call that waits for a run of its key elsewhere
 * holds no thread. Each claim runs on the executor it is given (here the calling thread),
 * and a wait is a timer on the engine's time, which the test moves.
 */
class NonBlockingWaitTest {

	private final ManualTime time = new ManualTime(Instant.parse("2026-01-01T00:00:00Z"));

	private final IdempotencyEngine engine = IdempotencyEngine
		.builder(new MemoryIdempotencyStore(this.time), JsonMapper.builder().build())
		.settings(EngineSettings.builder().waitTimeout(Duration.ofSeconds(10)).build())
		.time(this.time)
		.build();

	private final AtomicInteger runs = new AtomicInteger();

	@AfterEach
	void close() {
		this.engine.close();
	}

	private IdempotentOperation operation(InProgressPolicy policy) {
		return this.engine.prepare(OperationDefinition
			.of("payment", ResolvableType.forClassWithGenerics(CompletableFuture.class, String.class).getType())
			.onInProgress(policy)
			.build());
	}

	private CompletableFuture<Object> call(IdempotentOperation operation, CompletableFuture<String> result) {
		return this.engine.executeAsync(operation, "k-1", null, () -> {
			this.runs.incrementAndGet();
			return result;
		}, Runnable::run);
	}

	@Test
	void fiftyWaitersOfOneRunHoldNoThreadAndAllGetItsResult() {
		IdempotentOperation operation = operation(InProgressPolicy.WAIT);
		CompletableFuture<String> run = new CompletableFuture<>();
		CompletableFuture<Object> first = call(operation, run);
		List<CompletableFuture<Object>> waiters = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			// each returns at once on this very thread: its wait is a timer, not a sleep
			waiters.add(call(operation, new CompletableFuture<>()));
		}
		assertThat(waiters).noneMatch(CompletableFuture::isDone);
		run.complete("receipt");
		assertThat(first).isCompletedWithValue("receipt");
		this.time.advance(Duration.ofSeconds(1));
		assertThat(waiters).allSatisfy((waiter) -> assertThat(waiter).isCompletedWithValue("receipt"));
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aWaitThatOutlastsTheWaitTimeoutIsRejected() {
		IdempotentOperation operation = operation(InProgressPolicy.WAIT);
		call(operation, new CompletableFuture<>());
		CompletableFuture<Object> waiter = call(operation, new CompletableFuture<>());
		this.time.advance(Duration.ofSeconds(9));
		assertThat(waiter).isNotDone();
		this.time.advance(Duration.ofSeconds(2));
		assertThat(waiter).failsWithin(Duration.ZERO)
			.withThrowableOfType(java.util.concurrent.ExecutionException.class)
			.withCauseInstanceOf(IdempotencyInProgressException.class);
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aRejectingCallIsRejectedAtOnce() {
		call(operation(InProgressPolicy.WAIT), new CompletableFuture<>());
		CompletableFuture<Object> rejected = call(operation(InProgressPolicy.REJECT), new CompletableFuture<>());
		assertThat(rejected).failsWithin(Duration.ZERO)
			.withThrowableOfType(java.util.concurrent.ExecutionException.class)
			.withCauseInstanceOf(IdempotencyInProgressException.class);
	}

}
