package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ReactiveIdempotencyStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ArgumentsSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentResultNotStoredException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testfixtures.CountingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The protocol, case by case, through every shape of call ({@link Shape}: single, batch
 * element, future, Mono, and in the Kotlin tests a {@code suspend fun}): each case is written
 * once, and each store runs it by naming itself in a subclass of {@link EngineSuites} of a
 * few lines ({@code MemoryEngineTest} here, {@code PostgresJdbcEngineTest} and the others in
 * the store modules, {@code SuspendEngineTests} for Kotlin). Time moves
 * on a {@link ManualTime} that is the store's clock; leases are not renewed, so that the
 * clock alone decides them.
 */
public abstract class ProtocolBehaviourSuite {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final ManualTime clock = new ManualTime(Instant.now());

	private final AtomicInteger runs = new AtomicInteger();

	private final String workflow = "w-" + UUID.randomUUID();

	private @Nullable IdempotencyEngine engine;

	private CountingIdempotencyStore store;

	/**
	 * The store under test, new for each case, reading time from {@code clock}.
	 */
	protected abstract IdempotencyStore store(Clock clock);

	/**
	 * Whether the engine runs the asynchronous shapes on its non-blocking path: the store
	 * seen as a {@code ReactiveIdempotencyStore}, its steps on a scheduler (a store with a
	 * non-blocking side of its own names it in {@link #reactiveStore}).
	 */
	protected boolean nonBlocking() {
		return false;
	}

	/**
	 * The non-blocking side of the store under test, on the same records as
	 * {@link #store(Clock)}, reading time from {@code clock}; {@code null} (the default) for
	 * the blocking store's steps as tasks of a scheduler.
	 */
	protected @Nullable ReactiveIdempotencyStore reactiveStore(Clock clock) {
		return null;
	}

	/** The claims made through a store's own non-blocking side. */
	private final AtomicInteger reactiveClaims = new AtomicInteger();

	/** The non-blocking store, its claims counted. */
	private ReactiveIdempotencyStore counted(ReactiveIdempotencyStore store) {
		AtomicInteger claims = this.reactiveClaims;
		return new ReactiveIdempotencyStore() {

			@Override
			public reactor.core.publisher.Mono<io.github.idempotency.store.ReactiveClaimResult> claim(
					ClaimRequest request) {
				return store.claim(request).doOnSubscribe((subscription) -> claims.incrementAndGet());
			}

			@Override
			public reactor.core.publisher.Mono<List<io.github.idempotency.store.ReactiveClaimResult>> claimAll(
					List<ClaimRequest> requests) {
				return store.claimAll(requests).doOnSubscribe((subscription) -> claims.incrementAndGet());
			}

			@Override
			public reactor.core.publisher.Mono<List<Boolean>> completeAll(
					List<io.github.idempotency.store.ReactiveClaimHandle> handles, List<@Nullable String> responses) {
				return store.completeAll(handles, responses);
			}

			@Override
			public reactor.core.publisher.Mono<IdempotencyRecord> find(RecordId id) {
				return store.find(id);
			}

			@Override
			public reactor.core.publisher.Mono<Boolean> delete(RecordId id) {
				return store.delete(id);
			}

			@Override
			public String backend() {
				return store.backend();
			}

		};
	}

	@AfterEach
	void closeEngine() {
		if (this.engine != null) {
			this.engine.close();
		}
	}

	private IdempotentOperation start(Shape shape, InProgressPolicy onInProgress) {
		this.store = new CountingIdempotencyStore(store(this.clock));
		IdempotencyEngine.Builder engine = IdempotencyEngine.builder(this.store, JsonMapper.builder().build())
			.settings(EngineSettings.builder()
				.leaseTtl(LEASE)
				.leaseRenewal(false)
				.waitTimeout(Duration.ofSeconds(30))
				.build());
		if (nonBlocking()) {
			ReactiveIdempotencyStore reactive = reactiveStore(this.clock);
			engine.reactiveStore((reactive != null) ? counted(reactive)
					: ReactiveIdempotencyStore.of(this.store, Schedulers.boundedElastic()));
		}
		this.engine = engine.build();
		return shape.prepare(this.engine, this.workflow, Receipt.class, onInProgress,
				List.of(CardDeclinedException.class));
	}

	private @Nullable Object call(Shape shape, IdempotentOperation operation, String key, Object payload,
			java.util.function.Supplier<@Nullable Object> body) throws Throwable {
		return shape.call(this.engine, operation, key, payload, () -> {
			this.runs.incrementAndGet();
			return body.get();
		});
	}

	private @Nullable Object charge(Shape shape, IdempotentOperation operation, String key) throws Throwable {
		return call(shape, operation, key, key, () -> new Receipt("r" + this.runs.get()));
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aNewKeyRunsOnceAndEveryLaterCallGetsItsStoredResult(Shape shape) throws Throwable {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		assertThat(charge(shape, operation, "k1")).isEqualTo(new Receipt("r1"));
		assertThat(charge(shape, operation, "k1")).isEqualTo(new Receipt("r1"));
		assertThat(charge(shape, operation, "k1")).isEqualTo(new Receipt("r1"));
		assertThat(this.runs).hasValue(1);
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
	}

	/**
	 * A subscriber that leaves (a client gone, a {@code timeout}) does not cancel a run that
	 * claimed its key: the run ends and is stored, and the next call gets its result.
	 */
	@org.junit.jupiter.api.Test
	void aSubscriberThatCancelsDoesNotCancelTheClaimedRun() throws Throwable {
		IdempotentOperation operation = start(JavaShape.MONO, InProgressPolicy.WAIT);
		reactor.core.publisher.Sinks.One<Receipt> pending = reactor.core.publisher.Sinks.one();
		java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
		reactor.core.publisher.Mono<?> result = (reactor.core.publisher.Mono<?>) this.engine.execute(operation, "k1",
				"k1", () -> {
					this.runs.incrementAndGet();
					running.countDown();
					return pending.asMono();
				});
		reactor.core.Disposable subscriber = result.subscribe();
		assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
		subscriber.dispose();
		pending.tryEmitValue(new Receipt("r1"));
		assertThat(charge(JavaShape.MONO, operation, "k1")).isEqualTo(new Receipt("r1"));
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.runs).hasValue(1);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aKeyInProgressElsewhereIsRejectedWhenTheOperationRejects(Shape shape) {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		holdElsewhere("k1");
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> charge(shape, operation, "k1"));
		assertThat(this.runs).hasValue(0);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aKeyInProgressElsewhereIsWaitedForAndAnsweredWithItsResult(Shape shape) throws Exception {
		IdempotentOperation operation = start(shape, InProgressPolicy.WAIT);
		ClaimHandle elsewhere = holdElsewhere("k1");
		int claimsBefore = claims();
		CompletableFuture<@Nullable Object> waiting = CompletableFuture.supplyAsync(() -> {
			try {
				return charge(shape, operation, "k1");
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
		await().atMost(Duration.ofSeconds(30)).until(() -> claims() > claimsBefore);
		assertThat(elsewhere.complete("{\"id\":\"elsewhere\"}")).isTrue();
		assertThat(waiting.get(30, TimeUnit.SECONDS)).isEqualTo(new Receipt("elsewhere"));
		assertThat(this.runs).hasValue(0);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aKeyUsedAgainWithAnotherPayloadIsRefused(Shape shape) throws Throwable {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		call(shape, operation, "k1", "100 EUR", () -> new Receipt("r1"));
		if (shape.skipsRefusals()) {
			assertThat(call(shape, operation, "k1", "999 EUR", () -> new Receipt("r2"))).isNull();
		}
		else {
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> call(shape, operation, "k1", "999 EUR", () -> new Receipt("r2")));
		}
		assertThat(this.runs).hasValue(1);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aPermanentFailureIsRecordedAndReplayedWithoutRunningAgain(Shape shape) throws Throwable {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		assertThatExceptionOfType(CardDeclinedException.class).isThrownBy(() -> call(shape, operation, "k1", "k1", () -> {
			throw new CardDeclinedException("declined: 51");
		}));
		assertThat(status("k1")).isEqualTo(RecordStatus.FAILED);
		assertRefusedAsFailedBefore(shape, operation, "k1", CardDeclinedException.class);
		assertThat(this.runs).hasValue(1);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void anyOtherFailureGivesTheKeyBackSoTheNextCallRunsAgain(Shape shape) throws Throwable {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> call(shape, operation, "k1", "k1", () -> {
			throw new IllegalStateException("broker down");
		}));
		assertThat(this.store.find(new RecordId(this.workflow, "k1"))).isEmpty();
		assertThat(charge(shape, operation, "k1")).isEqualTo(new Receipt("r2"));
		assertThat(this.runs).hasValue(2);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aResultThatCannotBeStoredIsRecordedAsFailedSoTheNextCallDoesNotRunIt(Shape shape) throws Throwable {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		assertThat(call(shape, operation, "k1", "k1", () -> new Receipt(Receipt.UNWRITABLE)))
			.isEqualTo(new Receipt(Receipt.UNWRITABLE));
		IdempotencyRecord record = this.store.find(new RecordId(this.workflow, "k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record.errorMessage()).contains("Receipt").contains("cannot be stored").contains("cannot be read");
		assertRefusedAsFailedBefore(shape, operation, "k1", IdempotentResultNotStoredException.class);
		assertThat(this.runs).hasValue(1);
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aRunWhoseKeyWasTakenOverLeavesTheOtherRunsRecordAndSaysSo(Shape shape) {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		assertThatExceptionOfType(IdempotencyLeaseLostException.class).isThrownBy(() -> call(shape, operation, "k1",
				"k1", () -> {
					// this run stalls past its lease, another takes the key over and completes it
					this.clock.advance(LEASE.plusSeconds(1));
					ClaimResult takeover = this.store.claim(request("k1", "k1"));
					assertThat(takeover.isTakeover()).isTrue();
					assertThat(takeover.acquiredHandle().complete("{\"id\":\"takeover\"}")).isTrue();
					return new Receipt("stalled");
				}));
		assertThat(this.store.find(new RecordId(this.workflow, "k1")).orElseThrow().response())
			.isEqualTo("{\"id\":\"takeover\"}");
	}

	@ParameterizedTest
	@ArgumentsSource(ThroughShapes.Source.class)
	void aTakeoverRunsWithTheNextAttemptAndTheLastRecoveryPoint(Shape shape) throws Throwable {
		IdempotentOperation operation = start(shape, InProgressPolicy.REJECT);
		assertThat(holdElsewhere("k1").saveRecoveryPoint("stock-reserved")).isTrue();
		// the run that held it crashed: its lease runs out
		this.clock.advance(LEASE.plusSeconds(1));
		Object result = call(shape, operation, "k1", "k1", () -> new Receipt(IdempotencyContext.find()
			.map((context) -> context.attempt() + ":" + context.recoveryPoint().orElse("none"))
			.orElse("no context")));
		// a batch's elements run in one call of its method, which no single element's context can describe
		assertThat(result).isEqualTo(new Receipt(shape.bindsContext() ? "2:stock-reserved" : "no context"));
		IdempotencyRecord record = this.store.find(new RecordId(this.workflow, "k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.attempt()).isEqualTo(2);
	}

	private void assertRefusedAsFailedBefore(Shape shape, IdempotentOperation operation, String key,
			Class<? extends Throwable> original) throws Throwable {
		if (shape.skipsRefusals()) {
			assertThat(charge(shape, operation, key)).isNull();
		}
		else {
			assertThatExceptionOfType(IdempotentFailureReplayedException.class)
				.isThrownBy(() -> charge(shape, operation, key))
				.satisfies((ex) -> assertThat(ex.getOriginalType()).isEqualTo(original.getName()));
		}
	}

	private ClaimHandle holdElsewhere(String key) {
		ClaimResult held = this.store.claim(request(key, key));
		assertThat(held.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		return held.acquiredHandle();
	}

	private ClaimRequest request(String key, Object payload) {
		return new ClaimRequest(new RecordId(this.workflow, key), "elsewhere-" + UUID.randomUUID(),
				new Fingerprints(JsonMapper.builder().build()).of(payload), LEASE, Duration.ofHours(1));
	}

	private int claims() {
		return this.store.calls("claim") + this.store.calls("claimAll") + this.reactiveClaims.get();
	}

	private RecordStatus status(String key) {
		return this.store.find(new RecordId(this.workflow, key)).orElseThrow().status();
	}

	/** A result Jackson can write, but for one value, whose accessor throws. */
	record Receipt(String id) {

		static final String UNWRITABLE = "unwritable";

		@Override
		public String id() {
			if (UNWRITABLE.equals(this.id)) {
				throw new IllegalStateException("the id cannot be read");
			}
			return this.id;
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Receipt receipt && receipt.id.equals(this.id);
		}

		@Override
		public int hashCode() {
			return this.id.hashCode();
		}

		@Override
		public String toString() {
			return "Receipt[" + this.id + "]";
		}

	}

	static class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

}
