package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.testfixtures.CountingIdempotencyStore;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Operations whose result settles after the call returns: the record is completed,
 * failed or released when it settles (the lease renewed until then), and a duplicate gets
 * a settled result of the stored value.
 */
class AsyncResultTest {

	private final MemoryIdempotencyStore memory = new MemoryIdempotencyStore();

	private final CountingIdempotencyStore store = new CountingIdempotencyStore(this.memory);

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
			EngineSettings.defaults(), IdempotencyObserver.NONE);

	private final AtomicInteger runs = new AtomicInteger();

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aFutureIsCompletedWhenItSettlesAndADuplicateGetsTheStoredValue() throws Throwable {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<CompletableFuture<Receipt>>() {
		}, Duration.ofMillis(300));
		CompletableFuture<Receipt> pending = new CompletableFuture<>();
		CompletableFuture<?> first = (CompletableFuture<?>) run(operation, "k1", pending);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.store.calls("renew") >= 2);
		assertThat(first).isNotDone();
		assertThat(status("k1")).isEqualTo(RecordStatus.IN_PROGRESS);
		pending.complete(new Receipt("k1", 42));
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("k1", 42));
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
		CompletableFuture<?> duplicate = (CompletableFuture<?>) run(operation, "k1", new CompletableFuture<>());
		assertThat(duplicate.getNow(null)).isEqualTo(new Receipt("k1", 42));
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aFailureThatSettlesAfterTheReturnReleasesTheKeySoTheRedeliveryRunsAgain() throws Throwable {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<CompletionStage<Receipt>>() {
		}, null);
		CompletableFuture<Receipt> pending = new CompletableFuture<>();
		CompletableFuture<?> first = ((CompletionStage<?>) run(operation, "k1", pending)).toCompletableFuture();
		pending.completeExceptionally(new IllegalStateException("broker down"));
		assertThatExceptionOfType(Exception.class).isThrownBy(() -> first.get(10, TimeUnit.SECONDS))
			.withRootCauseInstanceOf(IllegalStateException.class);
		assertThat(this.memory.find(new RecordId("async", "k1"))).isEmpty();
		CompletableFuture<?> again = ((CompletionStage<?>) run(operation, "k1",
				CompletableFuture.completedFuture(new Receipt("k1", 7))))
			.toCompletableFuture();
		assertThat(again.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("k1", 7));
		assertThat(this.runs).hasValue(2);
	}

	@Test
	void aPermanentFailureThatSettlesAfterTheReturnIsReplayed() throws Throwable {
		Type futureOfReceipt = new ParameterizedTypeReference<CompletableFuture<Receipt>>() { }.getType();
		IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("async", futureOfReceipt)
			.fingerprinted(false)
			.recordFailureFor(List.of(IllegalArgumentException.class))
			.build());
		CompletableFuture<?> first = (CompletableFuture<?>) run(operation, "k1",
				CompletableFuture.failedFuture(new IllegalArgumentException("card declined")));
		assertThat(first).isCompletedExceptionally();
		assertThat(status("k1")).isEqualTo(RecordStatus.FAILED);
		assertThatExceptionOfType(IdempotentFailureReplayedException.class)
			.isThrownBy(() -> run(operation, "k1", new CompletableFuture<>()));
	}

	@Test
	void aMonoIsFollowedLikeAFuture() throws Throwable {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<Mono<Receipt>>() {
		}, null);
		Mono<?> first = (Mono<?>) run(operation, "k1", Mono.just(new Receipt("k1", 3)));
		assertThat(first.block(Duration.ofSeconds(10))).isEqualTo(new Receipt("k1", 3));
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
		Mono<?> duplicate = (Mono<?>) run(operation, "k1", Mono.just(new Receipt("k1", 99)));
		assertThat(duplicate.block(Duration.ofSeconds(10))).isEqualTo(new Receipt("k1", 3));
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void theTemplateFollowsAFutureToo() throws Exception {
		IdempotencyTemplate template = new DefaultIdempotencyTemplate(this.engine);
		CompletableFuture<Receipt> first = template.execute(IdempotentRequest.of("async-template", "k1"),
				new ParameterizedTypeReference<CompletableFuture<Receipt>>() {
				}, () -> CompletableFuture.supplyAsync(() -> new Receipt("k1", 5)));
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("k1", 5));
		CompletableFuture<Receipt> duplicate = template.execute(IdempotentRequest.of("async-template", "k1"),
				new ParameterizedTypeReference<CompletableFuture<Receipt>>() {
				}, () -> CompletableFuture.completedFuture(new Receipt("k1", 6)));
		assertThat(duplicate.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("k1", 5));
	}

	@Test
	void asynchronousTypesTheEngineCannotFollowFailThePreparation() {
		for (ParameterizedTypeReference<?> type : List.of(new ParameterizedTypeReference<Future<Receipt>>() {
		}, new ParameterizedTypeReference<Flux<Receipt>>() {
		})) {
			assertThatIllegalStateException().isThrownBy(() -> operation(type, null))
				.withMessageContaining("cannot follow");
		}
		OperationDefinition raw = OperationDefinition.of("async", CompletableFuture.class).fingerprinted(false).build();
		assertThatIllegalStateException().isThrownBy(() -> this.engine.prepare(raw))
			.withMessageContaining("does not say the type of its value");
	}

	@Test
	void anAsynchronousOperationInsideATransactionIsRefusedBeforeItsClaim() {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<CompletableFuture<Receipt>>() {
		}, null);
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(
				new DriverManagerDataSource("jdbc:h2:mem:async-in-transaction;DB_CLOSE_DELAY=-1")));
		assertThatIllegalStateException().isThrownBy(() -> transactions.executeWithoutResult((status) -> {
			try {
				run(operation, "k1", CompletableFuture.completedFuture(new Receipt("k1", 1)));
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		})).withMessageContaining("inside a transaction");
		assertThat(this.store.calls("claim")).isZero();
	}

	@Test
	void aMonoWhoseFirstSubscriberCancelsBeforeItSettlesIsStillSharedByEveryLaterSubscriber() throws Throwable {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<Mono<Receipt>>() {
		}, null);
		Sinks.One<Receipt> pending = Sinks.one();
		Mono<?> first = (Mono<?>) run(operation, "k1", pending.asMono());
		// as timeout(...).retryWhen(...) does: a subscriber gives up, another subscribes again
		first.subscribe().dispose();
		pending.tryEmitValue(new Receipt("k1", 42));
		assertThat(first.block(Duration.ofSeconds(10))).isEqualTo(new Receipt("k1", 42));
		assertThat(first.block(Duration.ofSeconds(10))).isEqualTo(new Receipt("k1", 42));
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.runs).hasValue(1);
	}

	/**
	 * A {@code Mono} whose work waits for its subscription (a {@code fromCallable}, a Kotlin
	 * {@code suspend fun}) sees its run's context there, as a method's own code does.
	 */
	@Test
	void workDeferredToTheSubscriptionSeesTheRunsContext() throws Throwable {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<Mono<String>>() {
		}, null);
		Mono<?> result = (Mono<?>) this.engine.execute(operation, "k1", null,
				() -> Mono.fromCallable(() -> IdempotencyContext.current().key()));
		assertThat(result.block(Duration.ofSeconds(10))).isEqualTo("k1");
	}

	/**
	 * With Reactor's automatic context propagation the run's context is current wherever the
	 * method's {@code Mono} goes on (another thread, after the method returned), and only
	 * there.
	 */
	@Test
	void withAutomaticContextPropagationTheRunsContextFollowsItsMonoToOtherThreads() throws Throwable {
		IdempotentOperation operation = operation(new ParameterizedTypeReference<Mono<String>>() {
		}, null);
		Hooks.enableAutomaticContextPropagation();
		try {
			Mono<?> result = (Mono<?>) this.engine.execute(operation, "k1", null, () -> Mono.delay(Duration.ofMillis(1))
				.publishOn(Schedulers.boundedElastic())
				.map((tick) -> Thread.currentThread().getName() + ":" + IdempotencyContext.current().key()));
			assertThat((String) result.block(Duration.ofSeconds(10))).startsWith("boundedElastic-").endsWith(":k1");
			assertThat(Mono.just("after").publishOn(Schedulers.boundedElastic())
				.map((value) -> IdempotencyContext.find().isPresent())
				.block(Duration.ofSeconds(10))).isFalse();
		}
		finally {
			Hooks.disableAutomaticContextPropagation();
		}
	}

	private Object run(IdempotentOperation operation, String key, Object result) throws Throwable {
		return this.engine.execute(operation, key, null, () -> {
			this.runs.incrementAndGet();
			return result;
		});
	}

	private IdempotentOperation operation(ParameterizedTypeReference<?> type, Duration lease) {
		return this.engine.prepare(OperationDefinition.of("async", type.getType())
			.fingerprinted(false)
			.leaseTtl(lease)
			.build());
	}

	private RecordStatus status(String key) {
		return this.memory.find(new RecordId("async", key)).orElseThrow().status();
	}

	record Receipt(String key, int amount) {
	}

}
