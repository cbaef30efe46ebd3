package io.github.idempotency.internal;

import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.observe.Outcome;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.testfixtures.CountingIdempotencyStore;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The engine's protocol, row by row of the claim-outcome table, on the memory store. Two
 * times, each moved by hand: the engine's ({@code time}: its waits, retries and renewals),
 * moved only by a test that waits or retries, and the store's clock ({@code clock}: its
 * leases), moved by a test whose lease runs out; so no test depends on how fast the machine
 * is, and each moves only the time it is about.
 */
class IdempotencyEngineTest {

	private static final String WORKFLOW = "payment";

	private final ManualTime time = new ManualTime(Instant.parse("2026-01-01T00:00:00Z"));

	private final ManualTime clock = new ManualTime(Instant.parse("2026-01-01T00:00:00Z"));

	private final CountingIdempotencyStore store = new CountingIdempotencyStore(new MemoryIdempotencyStore(this.clock));

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final JsonMapper jsonMapper = JsonMapper.builder().build();

	private IdempotencyEngine engine = engine(EngineSettings.defaults());

	private final AtomicInteger runs = new AtomicInteger();

	@AfterEach
	void closeEngine() {
		this.engine.close();
	}

	private IdempotencyEngine engine(EngineSettings settings) {
		return engine(this.store, settings);
	}

	private IdempotencyEngine engine(IdempotencyStore store, EngineSettings settings) {
		return engine(store, settings, this.time);
	}

	private IdempotencyEngine engine(IdempotencyStore store, EngineSettings settings, EngineTime time) {
		return IdempotencyEngine.builder(store, this.jsonMapper)
			.settings(settings)
			.observer(new MicrometerIdempotencyObserver(this.registry, store.backend()))
			.keyConverters(List.of(IdempotencyKeysTest.Header.CONVERTER))
			.time(time)
			.build();
	}

	/**
	 * Calls on another thread, moving the engine's time on a millisecond at a time while
	 * that call waits on it, until it ends.
	 * @return what the call returned
	 * @throws Throwable what it threw
	 */
	private @Nullable Object onEngineTime(Call call) throws Throwable {
		CompletableFuture<@Nullable Object> result = CompletableFuture.supplyAsync(() -> {
			try {
				return call.run();
			}
			catch (Throwable ex) {
				throw new CompletionException(ex);
			}
		});
		awaitOnEngineTime(result);
		try {
			return result.join();
		}
		catch (CompletionException ex) {
			throw ex.getCause();
		}
	}

	/**
	 * Moves the engine's time on a millisecond at a time, only while a thread waits on it,
	 * until {@code call} ends: a wait or a retry takes as long in the engine's time as the
	 * engine meant, and only as long in real time as the machine needs.
	 */
	private void awaitOnEngineTime(Future<?> call) {
		while (!call.isDone()) {
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(1))
				.until(() -> this.time.sleepers() > 0 || call.isDone());
			if (this.time.sleepers() > 0) {
				this.time.advance(Duration.ofMillis(1));
			}
		}
	}

	/**
	 * Moves the engine's time on a millisecond at a time, running its retries on this
	 * thread, until {@code result} is settled.
	 */
	private void advanceUntilDone(Future<?> result) {
		for (int millis = 0; !result.isDone(); millis++) {
			assertThat(millis).as("milliseconds of engine time").isLessThan(60_000);
			this.time.advance(Duration.ofMillis(1));
		}
	}

	@FunctionalInterface
	private interface Call {

		@Nullable Object run() throws Throwable;

	}

	private IdempotentOperation operation(java.lang.reflect.Type resultType) {
		return operation(resultType, InProgressPolicy.DEFAULT, List.of());
	}

	private IdempotentOperation operation(java.lang.reflect.Type resultType, InProgressPolicy policy,
			List<Class<? extends Throwable>> recordFailureFor) {
		return this.engine.prepare(OperationDefinition.of(WORKFLOW, resultType)
			.onInProgress(policy)
			.recordFailureFor(recordFailureFor)
			.build());
	}

	private @Nullable Object charge(IdempotentOperation operation, @Nullable Object key, Object payload)
			throws Throwable {
		return this.engine.execute(operation, key, payload, () -> new Receipt("r-" + this.runs.incrementAndGet(), 42));
	}

	private double requests(Outcome outcome) {
		return this.registry.counter(IdempotencyMeters.REQUESTS, "workflow", WORKFLOW, "backend", "memory", "outcome",
				outcome.tag()).count();
	}

	private double counter(String name) {
		return this.registry.counter(name, "workflow", WORKFLOW, "backend", "memory").count();
	}

	record Receipt(String id, int amount) {
	}

	@Nested
	class Acquired {

		@Test
		void firstDeliveryRunsOnceAndCostsOneClaimAndOneComplete() throws Throwable {
			IdempotentOperation operation = operation(Receipt.class);
			Object result = charge(operation, "k1", "p");
			assertThat(result).isEqualTo(new Receipt("r-1", 42));
			assertThat(IdempotencyEngineTest.this.store.calls("claim")).isOne();
			assertThat(IdempotencyEngineTest.this.store.calls("complete")).isOne();
			assertThat(IdempotencyEngineTest.this.store.totalCalls()).isEqualTo(2);
			assertThat(requests(Outcome.MISS)).isOne();
			IdempotencyRecord record = IdempotencyEngineTest.this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow();
			assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(record.response()).isEqualTo("{\"id\":\"r-1\",\"amount\":42}");
		}

		@Test
		void takeoverRunsAgainWithTheNextAttemptAndTheRecoveryPoint() throws Throwable {
			RecordId id = new RecordId(WORKFLOW, "k1");
			IdempotencyEngineTest.this.store.claim(new ClaimRequest(id, "crashed", null, Duration.ofSeconds(30),
					Duration.ofDays(1))).acquiredHandle().saveRecoveryPoint("card-charged");
			IdempotencyEngineTest.this.clock.advance(Duration.ofSeconds(31));
			Object result = IdempotencyEngineTest.this.engine.execute(operation(String.class), "k1", null, () -> {
				IdempotencyContext context = IdempotencyContext.current();
				return context.workflow() + "/" + context.key() + " attempt " + context.attempt() + " from "
						+ context.recoveryPoint().orElse("-");
			});
			assertThat(result).isEqualTo("payment/k1 attempt 2 from card-charged");
			assertThat(counter(IdempotencyMeters.TAKEOVERS)).isOne();
			assertThat(requests(Outcome.MISS)).isOne();
		}

		@Test
		void recoveryPointIsStoredAtOnce() throws Throwable {
			IdempotencyEngineTest.this.engine.execute(operation(void.class), "k1", null, () -> {
				IdempotencyContext.current().saveRecoveryPoint("stock-reserved");
				assertThat(IdempotencyEngineTest.this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow()
					.recoveryPoint()).isEqualTo("stock-reserved");
				assertThat(IdempotencyContext.current().recoveryPoint()).contains("stock-reserved");
				return null;
			});
		}

		@Test
		void contextExistsOnlyWhileTheOperationRuns() throws Throwable {
			assertThat(IdempotencyContext.find()).isEmpty();
			IdempotencyEngineTest.this.engine.execute(operation(void.class), "outer", null, () -> {
				IdempotencyEngineTest.this.engine.execute(operation(void.class), "inner", null, () -> {
					assertThat(IdempotencyContext.current().key()).isEqualTo("inner");
					return null;
				});
				assertThat(IdempotencyContext.current().key()).isEqualTo("outer");
				return null;
			});
			assertThatIllegalStateException().isThrownBy(IdempotencyContext::current);
		}

		@Test
		void voidOperationStoresNoResponse() throws Throwable {
			IdempotentOperation operation = operation(void.class);
			assertThat(IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> {
				IdempotencyEngineTest.this.runs.incrementAndGet();
				return null;
			})).isNull();
			assertThat(IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> {
				IdempotencyEngineTest.this.runs.incrementAndGet();
				return null;
			})).isNull();
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
			assertThat(IdempotencyEngineTest.this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow().response())
				.isNull();
		}

		@Test
		void nullResultIsReplayedAsNull() throws Throwable {
			IdempotentOperation operation = operation(String.class);
			assertThat(IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> null)).isNull();
			assertThat(IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> "ran again")).isNull();
		}

	}

	@Nested
	class Duplicate {

		@Test
		void duplicateReturnsTheStoredResultWithOneStoreCall() throws Throwable {
			IdempotentOperation operation = operation(Receipt.class);
			Object first = charge(operation, "k1", "p");
			IdempotencyEngineTest.this.store.reset();
			Object second = charge(operation, "k1", "p");
			assertThat(second).isEqualTo(first);
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
			assertThat(IdempotencyEngineTest.this.store.totalCalls()).isOne();
			assertThat(requests(Outcome.HIT)).isOne();
		}

		@Test
		void genericResultTypesRoundTrip() throws Throwable {
			java.lang.reflect.Type type = new ParameterizedTypeReference<Map<String, List<Receipt>>>() {
			}.getType();
			IdempotentOperation operation = operation(type);
			Map<String, List<Receipt>> value = Map.of("a", List.of(new Receipt("x", 1), new Receipt("y", 2)));
			IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> value);
			Object replayed = IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> Map.of());
			assertThat(replayed).isEqualTo(value);
		}

		@Test
		void unreadableStoredResultFailsWithoutRunning() throws Throwable {
			RecordId id = new RecordId(WORKFLOW, "k1");
			IdempotencyEngineTest.this.store.claim(new ClaimRequest(id, "o", null, Duration.ofSeconds(30),
					Duration.ofDays(1))).acquiredHandle().complete("{not json");
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> charge(operation(Receipt.class), "k1", "p"))
				.withMessageContaining("workflow 'payment' key 'k1'")
				.withMessageContaining("cannot be read");
			assertThat(IdempotencyEngineTest.this.runs).hasValue(0);
			assertThat(requests(Outcome.STORE_ERROR)).isOne();
			assertThat(IdempotencyEngineTest.this.store.find(id).orElseThrow().response()).isEqualTo("{not json");
		}

	}

	@Nested
	class Failed {

		@Test
		void permanentFailureIsStoredAndReplayed() {
			IdempotentOperation operation = operation(Receipt.class, InProgressPolicy.DEFAULT,
					List.of(IllegalArgumentException.class));
			assertThatExceptionOfType(NumberFormatException.class).isThrownBy(() -> IdempotencyEngineTest.this.engine
				.execute(operation, "k1", "p", () -> {
					IdempotencyEngineTest.this.runs.incrementAndGet();
					throw new NumberFormatException("card 51 declined");
				}));
			assertThatExceptionOfType(IdempotentFailureReplayedException.class)
				.isThrownBy(() -> charge(operation, "k1", "p"))
				.satisfies((ex) -> {
					assertThat(ex.getOriginalType()).isEqualTo(NumberFormatException.class.getName());
					assertThat(ex.getOriginalMessage()).isEqualTo("card 51 declined");
					assertThat(ex.isRetryable()).isFalse();
				});
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
			assertThat(requests(Outcome.FAILED)).isOne();
		}

		@Test
		void otherFailureReleasesTheKeySoTheRedeliveryRuns() throws Throwable {
			IdempotentOperation operation = operation(Receipt.class, InProgressPolicy.DEFAULT,
					List.of(IllegalArgumentException.class));
			IllegalStateException failure = new IllegalStateException("database down");
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> IdempotencyEngineTest.this.engine
				.execute(operation, "k1", "p", () -> {
					throw failure;
				})).isSameAs(failure);
			assertThat(IdempotencyEngineTest.this.store.find(new RecordId(WORKFLOW, "k1"))).isEmpty();
			assertThat(charge(operation, "k1", "p")).isEqualTo(new Receipt("r-1", 42));
		}

		@Test
		void checkedExceptionsPassThroughUnchanged() {
			Exception failure = new java.io.IOException("disk");
			assertThatExceptionOfType(java.io.IOException.class).isThrownBy(() -> IdempotencyEngineTest.this.engine
				.execute(operation(void.class), "k1", null, () -> {
					throw failure;
				})).isSameAs(failure);
		}

	}

	@Nested
	class InProgress {

		@Test
		void rejectThrowsAtOnceAndCountsAConflict() throws Exception {
			CountDownLatch running = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			IdempotentOperation reject = operation(Receipt.class, InProgressPolicy.REJECT, List.of());
			CompletableFuture<Object> first = runBlocked(reject, running, finish);
			try {
				assertThatExceptionOfType(IdempotencyInProgressException.class)
					.isThrownBy(() -> charge(reject, "k1", "p"))
					.satisfies((ex) -> assertThat(ex.isRetryable()).isTrue());
				assertThat(counter(IdempotencyMeters.CONFLICTS)).isOne();
				assertThat(requests(Outcome.CONFLICT)).isOne();
			}
			finally {
				finish.countDown();
			}
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("first", 1));
		}

		@Test
		void waitReturnsTheResultOnceTheOtherRunCompletes() throws Exception {
			CountDownLatch running = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			IdempotentOperation wait = operation(Receipt.class, InProgressPolicy.WAIT, List.of());
			CompletableFuture<Object> first = runBlocked(wait, running, finish);
			CompletableFuture<Object> second = CompletableFuture.supplyAsync(() -> call(wait));
			await().atMost(Duration.ofSeconds(10)).until(() -> counter(IdempotencyMeters.CONFLICTS) == 1);
			assertThat(second).isNotDone();
			finish.countDown();
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("first", 1));
			awaitOnEngineTime(second);
			assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("first", 1));
			assertThat(IdempotencyEngineTest.this.runs).hasValue(0);
			assertThat(requests(Outcome.HIT)).isOne();
			assertThat(requests(Outcome.CONFLICT)).isZero();
		}

		@Test
		void waitRunsTheOperationWhenTheOtherRunReleases() throws Exception {
			CountDownLatch running = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			IdempotentOperation wait = operation(Receipt.class, InProgressPolicy.WAIT, List.of());
			CompletableFuture<Object> first = CompletableFuture.supplyAsync(() -> {
				try {
					return IdempotencyEngineTest.this.engine.execute(wait, "k1", "p", () -> {
						running.countDown();
						finish.await();
						throw new IllegalStateException("transient");
					});
				}
				catch (Throwable ex) {
					return ex;
				}
			});
			running.await();
			CompletableFuture<Object> second = CompletableFuture.supplyAsync(() -> call(wait));
			await().atMost(Duration.ofSeconds(10)).until(() -> counter(IdempotencyMeters.CONFLICTS) == 1);
			finish.countDown();
			assertThat(first.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
			awaitOnEngineTime(second);
			assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("r-1", 42));
		}

		@Test
		void waitGivesUpAfterTheWaitTimeout() throws Exception {
			IdempotencyEngineTest.this.engine.close();
			IdempotencyEngineTest.this.engine = engine(EngineSettings.builder()
					.waitTimeout(Duration.ofMillis(200))
					.build());
			CountDownLatch running = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			IdempotentOperation wait = operation(Receipt.class);
			CompletableFuture<Object> first = runBlocked(wait, running, finish);
			try {
				long start = IdempotencyEngineTest.this.time.nanoTime();
				assertThatExceptionOfType(IdempotencyInProgressException.class)
					.isThrownBy(() -> onEngineTime(() -> charge(wait, "k1", "p")));
				assertThat(Duration.ofNanos(IdempotencyEngineTest.this.time.nanoTime() - start))
					.isEqualTo(Duration.ofMillis(200));
				assertThat(IdempotencyEngineTest.this.store.calls("claim")).isGreaterThan(2);
				assertThat(requests(Outcome.CONFLICT)).isOne();
			}
			finally {
				finish.countDown();
			}
			first.get(10, TimeUnit.SECONDS);
		}

		private CompletableFuture<Object> runBlocked(IdempotentOperation operation, CountDownLatch running,
				CountDownLatch finish) throws InterruptedException {
			CompletableFuture<Object> first = CompletableFuture.supplyAsync(() -> {
				try {
					return IdempotencyEngineTest.this.engine.execute(operation, "k1", "p", () -> {
						running.countDown();
						finish.await();
						return new Receipt("first", 1);
					});
				}
				catch (Throwable ex) {
					throw new IllegalStateException(ex);
				}
			});
			running.await();
			return first;
		}

		private Object call(IdempotentOperation operation) {
			try {
				return charge(operation, "k1", "p");
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	@Nested
	class Mismatch {

		@Test
		void keyReusedWithAnotherPayloadIsRejectedWithoutRunning() throws Throwable {
			IdempotentOperation operation = operation(Receipt.class);
			charge(operation, "k1", Map.of("amount", 10, "card", "4242"));
			assertThat(charge(operation, "k1", Map.of("card", "4242", "amount", 10))).isEqualTo(new Receipt("r-1", 42));
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> charge(operation, "k1", Map.of("amount", 99, "card", "4242")))
				.satisfies((ex) -> assertThat(ex.isRetryable()).isFalse());
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
			assertThat(requests(Outcome.MISMATCH)).isOne();
			assertThat(requests(Outcome.HIT)).isOne();
		}

	}

	@Nested
	class BadKeys {

		@ParameterizedTest
		@ValueSource(strings = { "", "   ", "\t\n" })
		void blankKeyIsMissing(String key) {
			assertThatExceptionOfType(MissingIdempotencyKeyException.class)
				.isThrownBy(() -> charge(operation(Receipt.class), key, "p"))
				.withMessageContaining("'payment'")
				.withMessageContaining("blank");
			assertNothingHappened();
		}

		@Test
		void nullKeyIsMissing() {
			assertThatExceptionOfType(MissingIdempotencyKeyException.class)
				.isThrownBy(() -> charge(operation(Receipt.class), null, "p"))
				.withMessageContaining("missing")
				.satisfies((ex) -> assertThat(ex.isRetryable()).isFalse());
			assertNothingHappened();
		}

		@Test
		void oversizedKeyIsInvalid() throws Throwable {
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
				.isThrownBy(() -> charge(operation(Receipt.class), "k".repeat(256), "p"))
				.withMessageContaining("256 characters")
				.withMessageContaining("idempotency.max-key-length=255");
			assertNothingHappened();
			assertThat(charge(operation(Receipt.class), "k".repeat(255), "p")).isNotNull();
		}

		private void assertNothingHappened() {
			assertThat(IdempotencyEngineTest.this.runs).hasValue(0);
			assertThat(IdempotencyEngineTest.this.store.totalCalls()).isZero();
			assertThat(requests(Outcome.INVALID_KEY)).isOne();
		}

		@Test
		void keysOfEveryShapeBecomeText() throws Throwable {
			UUID uuid = UUID.randomUUID();
			Map<Object, String> keys = Map.of("plain", "plain", "bytes-é".getBytes(StandardCharsets.UTF_8), "bytes-é",
					ByteBuffer.wrap("buffer".getBytes(StandardCharsets.UTF_8)), "buffer",
					new IdempotencyKeysTest.Header("header-🔑".getBytes(StandardCharsets.UTF_8)), "header-🔑", uuid,
					uuid.toString(), 42L, "42");
			for (Map.Entry<Object, String> entry : keys.entrySet()) {
				IdempotencyEngineTest.this.engine.execute(operation(void.class), entry.getKey(), null, () -> null);
				assertThat(IdempotencyEngineTest.this.store.find(new RecordId(WORKFLOW, entry.getValue())))
					.as(entry.getValue())
					.isPresent();
			}
		}

	}

	@Nested
	class StoreUnavailable {

		private final IdempotencyStore broken = new UnreachableIdempotencyStore("memory");

		@Test
		void failClosedThrowsAndDoesNotRun() {
			IdempotencyEngineTest.this.engine = engine(this.broken, EngineSettings.defaults());
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> charge(operation(Receipt.class), "k1", "p"))
				.withMessageContaining("fail-closed")
				.havingCause()
				.withMessage("connection refused");
			assertThat(IdempotencyEngineTest.this.runs).hasValue(0);
			assertThat(requests(Outcome.STORE_ERROR)).isOne();
			assertThat(IdempotencyEngineTest.this.registry.timer(IdempotencyMeters.STORE, "backend", "memory",
					"operation", "claim", "result", "error").count()).isOne();
		}

		@Test
		void failOpenRunsUnprotected() throws Throwable {
			IdempotencyEngineTest.this.engine = engine(this.broken, EngineSettings.builder()
					.waitTimeout(Duration.ofSeconds(1))
					.storeUnavailable(StoreUnavailablePolicy.FAIL_OPEN)
					.build());
			assertThat(charge(operation(Receipt.class), "k1", "p")).isEqualTo(new Receipt("r-1", 42));
			assertThat(charge(operation(Receipt.class), "k1", "p")).isEqualTo(new Receipt("r-2", 42));
			assertThat(requests(Outcome.STORE_ERROR)).isEqualTo(2);
		}

		@Test
		void aCallTheStoreRefusesIsNeverRunUnprotected() {
			IdempotencyStore refusing = new IdempotencyStore() {

				@Override
				public ClaimResult claim(ClaimRequest request) {
					throw new IllegalStateException("cannot claim in a read-only transaction");
				}

				@Override
				public Optional<IdempotencyRecord> find(RecordId id) {
					return Optional.empty();
				}

				@Override
				public boolean delete(RecordId id) {
					return false;
				}

			};
			for (StoreUnavailablePolicy policy : StoreUnavailablePolicy.values()) {
				IdempotencyEngineTest.this.engine = engine(refusing, EngineSettings.builder()
						.waitTimeout(Duration.ofSeconds(1))
						.storeUnavailable(policy)
						.build());
				assertThatIllegalStateException().as(policy.name())
					.isThrownBy(() -> charge(operation(Receipt.class), "k1", "p"))
					.withMessage("cannot claim in a read-only transaction");
			}
			assertThat(IdempotencyEngineTest.this.runs).hasValue(0);
		}

	}

	/**
	 * A store error when the result is stored: the operation ran, so a record left in
	 * progress would be taken over and run again once its lease runs out.
	 */
	@Nested
	class ResultNotStored {

		private final CountingIdempotencyStore store = IdempotencyEngineTest.this.store;

		private IdempotentOperation operation(@Nullable Duration leaseTtl) {
			return IdempotencyEngineTest.this.engine.prepare(OperationDefinition.of(WORKFLOW, Receipt.class)
				.leaseTtl(leaseTtl)
				.onInProgress(InProgressPolicy.REJECT)
				.build());
		}

		@Test
		void aStoreErrorIsRetriedUntilTheResultIsStoredSoTheRedeliveryIsADuplicate() throws Throwable {
			this.store.failCalls("complete", 3);
			IdempotentOperation operation = operation(null);
			assertThat(onEngineTime(() -> charge(operation, "k1", "p"))).isEqualTo(new Receipt("r-1", 42));
			assertThat(this.store.calls("complete")).isEqualTo(4);
			assertThat(IdempotencyEngineTest.this.registry.timer(IdempotencyMeters.STORE, "backend", "memory",
					"operation", "complete", "result", "error").count()).isEqualTo(3);
			assertThat(this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow().status())
				.isEqualTo(RecordStatus.COMPLETED);
			// the lease long over: the redelivery is answered, not run again
			IdempotencyEngineTest.this.clock.advance(Duration.ofMinutes(5));
			assertThat(charge(operation, "k1", "p")).isEqualTo(new Receipt("r-1", 42));
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
		}

		@Test
		void aResultStoredWhoseAnswerWasLostIsNotReportedAsALostLease() throws Throwable {
			this.store.loseAnswers("complete", 1);
			assertThat(onEngineTime(() -> charge(operation(null), "k1", "p"))).isEqualTo(new Receipt("r-1", 42));
			assertThat(this.store.calls("complete")).isEqualTo(2);
			assertThat(counter(IdempotencyMeters.LEASE_LOST)).isZero();
			assertThat(this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow().response())
				.isEqualTo("{\"id\":\"r-1\",\"amount\":42}");
		}

		@Test
		void aRetryAfterAnotherRunTookTheKeyOverAndCompletedItIsALostLease() {
			RecordId id = new RecordId(WORKFLOW, "k1");
			assertThatExceptionOfType(IdempotencyLeaseLostException.class)
				.isThrownBy(() -> onEngineTime(() -> IdempotencyEngineTest.this.engine.execute(operation(null), "k1", "p",
						() -> {
							// this run stalls past its lease; another one takes the key over and completes it
							IdempotencyEngineTest.this.clock.advance(Duration.ofMinutes(1));
							this.store.claim(new ClaimRequest(id, "elsewhere", null, Duration.ofSeconds(30),
									Duration.ofDays(1))).acquiredHandle()
								.complete("{\"id\":\"r-elsewhere\",\"amount\":42}");
							// and this run's first attempt to store its result fails
							this.store.failCalls("complete", 1);
							return new Receipt("r-1", 42);
						})));
			IdempotencyRecord record = this.store.find(id).orElseThrow();
			assertThat(record.owner()).isEqualTo("elsewhere");
			assertThat(record.response()).contains("r-elsewhere");
		}

		@Test
		void retriesEndWithTheLeaseAndTheErrorIsThrown() {
			this.store.failCalls("complete", Integer.MAX_VALUE);
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> onEngineTime(() -> charge(operation(Duration.ofMillis(50)), "k1", "p")))
				.withMessageContaining("could not be stored")
				.havingCause()
				.withMessage("connection reset");
			assertThat(this.store.calls("complete")).isGreaterThan(1);
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
		}

		@Test
		void insideATransactionTheErrorIsThrownAtOnceToRollTheOperationBack() {
			this.store.failCalls("complete", 1);
			TransactionSynchronizationManager.setActualTransactionActive(true);
			try {
				assertThatExceptionOfType(IdempotencyStoreException.class)
					.isThrownBy(() -> charge(operation(null), "k1", "p"));
			}
			finally {
				TransactionSynchronizationManager.setActualTransactionActive(false);
			}
			assertThat(this.store.calls("complete")).isOne();
		}

		@Test
		void anErrorNoRetryCanFixIsThrownAtOnce() {
			this.store.failCalls("complete", 1, new DataIntegrityViolationException("value too long for type varchar(4000)"));
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> charge(operation(null), "k1", "p"))
				.havingCause()
				.isInstanceOf(DataIntegrityViolationException.class);
			assertThat(this.store.calls("complete")).isOne();
		}

		@Test
		void aCompletionTheStoreRefusesIsNotRetried() {
			this.store.failCalls("complete", 1, new IllegalStateException("cannot complete in a read-only transaction"));
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> charge(operation(null), "k1", "p"))
				.havingCause()
				.withMessage("cannot complete in a read-only transaction");
			assertThat(this.store.calls("complete")).isOne();
		}

		@Test
		void anAsynchronousResultIsRetriedOffTheThreadThatSettledItUntilItIsStored() throws Throwable {
			this.store.failCalls("complete", Integer.MAX_VALUE);
			IdempotentOperation operation = asyncOperation(null);
			CompletableFuture<Receipt> pending = new CompletableFuture<>();
			CompletableFuture<?> result = (CompletableFuture<?>) IdempotencyEngineTest.this.engine.execute(operation,
					"k1", "p", () -> pending);
			// the thread that settles the result is not held by the retries
			assertTimeoutPreemptively(Duration.ofSeconds(10), () -> pending.complete(new Receipt("r-1", 42)));
			// the first retry comes within 5 ms, the second not before 7.5 ms
			IdempotencyEngineTest.this.time.advance(Duration.ofMillis(5));
			assertThat(this.store.calls("complete")).isEqualTo(2);
			assertThat(result).isNotDone();
			this.store.failCalls("complete", 0);
			advanceUntilDone(result);
			assertThat(result).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(new Receipt("r-1", 42));
			assertThat(this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow().status())
				.isEqualTo(RecordStatus.COMPLETED);
		}

		private static java.util.Set<Thread> schedulerThreads() {
			java.util.Set<Thread> threads = new java.util.HashSet<>(Thread.getAllStackTraces().keySet());
			threads.removeIf((thread) -> !thread.getName().equals("idempotency-scheduler"));
			return threads;
		}

		@Test
		void manyAsynchronousResultsWaitingForTheStoreShareTwoThreads() throws Throwable {
			// on the system's time: its threads are what this is about
			IdempotencyEngineTest.this.engine.close();
			IdempotencyEngineTest.this.engine = engine(this.store, EngineSettings.defaults(), EngineTime.system());
			this.store.failCalls("complete", Integer.MAX_VALUE);
			IdempotentOperation operation = asyncOperation(null);
			// other engines' schedulers, closed but not gone yet, are not this one's
			java.util.Set<Thread> before = schedulerThreads();
			List<CompletableFuture<?>> results = new java.util.ArrayList<>();
			for (int i = 0; i < 50; i++) {
				Receipt receipt = new Receipt("r-" + i, 42);
				results.add((CompletableFuture<?>) IdempotencyEngineTest.this.engine.execute(operation, "k" + i, "p",
						() -> CompletableFuture.completedFuture(receipt)));
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> this.store.calls("complete") > 150);
			java.util.Set<Thread> started = schedulerThreads();
			started.removeAll(before);
			assertThat(started).hasSizeLessThanOrEqualTo(2);
			this.store.failCalls("complete", 0);
			for (int i = 0; i < 50; i++) {
				assertThat(results.get(i)).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(new Receipt("r-" + i, 42));
			}
		}

		@Test
		void anAsynchronousResultNeverStoredKeepsTheKeyInProgress() throws Throwable {
			this.store.failCalls("complete", Integer.MAX_VALUE);
			IdempotentOperation operation = asyncOperation(Duration.ofMillis(50));
			IdempotencyEngine.Action charge = () -> CompletableFuture
				.completedFuture(new Receipt("r-" + IdempotencyEngineTest.this.runs.incrementAndGet(), 42));
			CompletableFuture<?> result = (CompletableFuture<?>) IdempotencyEngineTest.this.engine.execute(operation,
					"k1", "p", charge);
			advanceUntilDone(result);
			assertThat(result).failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(java.util.concurrent.ExecutionException.class)
				.withCauseInstanceOf(IdempotencyStoreException.class);
			assertThat(this.store.calls("complete")).isGreaterThan(1);
			// not released: the redelivery finds it in progress instead of running it again
			assertThat(this.store.calls("release")).isZero();
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> IdempotencyEngineTest.this.engine.execute(operation, "k1", "p", charge));
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
		}

		private IdempotentOperation asyncOperation(@Nullable Duration leaseTtl) {
			Type futureOfReceipt = new ParameterizedTypeReference<CompletableFuture<Receipt>>() { }.getType();
			return IdempotencyEngineTest.this.engine.prepare(OperationDefinition.of(WORKFLOW, futureOfReceipt)
				.leaseTtl(leaseTtl)
				.onInProgress(InProgressPolicy.REJECT)
				.build());
		}

	}

	/**
	 * A permanent failure ({@code recordFailureFor}) the store does not take: recorded as
	 * a result is, so a redelivery replays it instead of running the operation again.
	 */
	@Nested
	class FailureNotRecorded {

		private final CountingIdempotencyStore store = IdempotencyEngineTest.this.store;

		private final RecordId id = new RecordId(WORKFLOW, "k1");

		private IdempotentOperation operation(java.lang.reflect.Type resultType, @Nullable Duration leaseTtl) {
			return IdempotencyEngineTest.this.engine.prepare(OperationDefinition.of(WORKFLOW, resultType)
				.leaseTtl(leaseTtl)
				.onInProgress(InProgressPolicy.REJECT)
				.recordFailureFor(List.of(CardDeclinedException.class))
				.build());
		}

		private Object decline(IdempotentOperation operation) throws Throwable {
			return IdempotencyEngineTest.this.engine.execute(operation, "k1", "p", () -> {
				throw new CardDeclinedException("declined: " + IdempotencyEngineTest.this.runs.incrementAndGet());
			});
		}

		@Test
		void aStoreErrorIsRetriedUntilTheFailureIsRecordedSoTheRedeliveryReplaysIt() {
			this.store.failCalls("fail", 3);
			IdempotentOperation operation = operation(Receipt.class, null);
			assertThatExceptionOfType(CardDeclinedException.class)
				.isThrownBy(() -> onEngineTime(() -> decline(operation)))
				.withMessage("declined: 1")
				.satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
			assertThat(this.store.calls("fail")).isEqualTo(4);
			assertThat(this.store.find(this.id).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
			// the lease long over: the redelivery is answered with the failure, not run again
			IdempotencyEngineTest.this.clock.advance(Duration.ofMinutes(5));
			assertThatExceptionOfType(IdempotentFailureReplayedException.class).isThrownBy(() -> decline(operation))
				.satisfies((ex) -> assertThat(ex.getOriginalMessage()).isEqualTo("declined: 1"));
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
		}

		@Test
		void aFailureRecordedWhoseAnswerWasLostIsNotReportedAsALostLease() {
			this.store.loseAnswers("fail", 1);
			assertThatExceptionOfType(CardDeclinedException.class)
				.isThrownBy(() -> onEngineTime(() -> decline(operation(Receipt.class, null))))
				.satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
			assertThat(this.store.calls("fail")).isEqualTo(2);
			assertThat(counter(IdempotencyMeters.LEASE_LOST)).isZero();
			assertThat(this.store.find(this.id).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
		}

		@Test
		void aRetryAfterAnotherRunTookTheKeyOverAndFailedItIsALostLease() {
			assertThatExceptionOfType(CardDeclinedException.class)
				.isThrownBy(() -> onEngineTime(() -> IdempotencyEngineTest.this.engine
					.execute(operation(Receipt.class, null), "k1", "p", () -> {
							// this run stalls past its lease; another one takes the key over and fails it
							IdempotencyEngineTest.this.clock.advance(Duration.ofMinutes(1));
							this.store.claim(new ClaimRequest(this.id, "elsewhere", null, Duration.ofSeconds(30),
									Duration.ofDays(1))).acquiredHandle().fail(new CardDeclinedException("elsewhere"));
							// and this run's first attempt to record its failure fails
							this.store.failCalls("fail", 1);
							throw new CardDeclinedException("declined: 1");
						})))
				.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
					.isInstanceOf(IdempotencyLeaseLostException.class));
			IdempotencyRecord record = this.store.find(this.id).orElseThrow();
			assertThat(record.owner()).isEqualTo("elsewhere");
			assertThat(record.errorMessage()).isEqualTo("elsewhere");
			assertThat(counter(IdempotencyMeters.LEASE_LOST)).isOne();
		}

		@Test
		void retriesEndWithTheLeaseAndTheStoreErrorIsAddedToTheFailure() {
			this.store.failCalls("fail", Integer.MAX_VALUE);
			assertThatExceptionOfType(CardDeclinedException.class)
				.isThrownBy(() -> onEngineTime(() -> decline(operation(Receipt.class, Duration.ofMillis(50)))))
				.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
					.isInstanceOf(IdempotencyStoreException.class)
					.extracting(Throwable::getCause)
					.extracting(Throwable::getMessage)
					.isEqualTo("connection reset"));
			assertThat(this.store.calls("fail")).isGreaterThan(1);
			assertThat(this.store.find(this.id).orElseThrow().status()).isEqualTo(RecordStatus.IN_PROGRESS);
		}

		@Test
		void insideATransactionTheStoreErrorIsNotRetried() {
			this.store.failCalls("fail", 1);
			TransactionSynchronizationManager.setActualTransactionActive(true);
			try {
				assertThatExceptionOfType(CardDeclinedException.class)
					.isThrownBy(() -> decline(operation(Receipt.class, null)))
					.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
						.isInstanceOf(IdempotencyStoreException.class));
			}
			finally {
				TransactionSynchronizationManager.setActualTransactionActive(false);
			}
			assertThat(this.store.calls("fail")).isOne();
		}

		@Test
		void aReleaseTheStoreDoesNotTakeIsNotRetried() {
			// the next delivery is meant to run again anyway: it waits for the lease at most
			this.store.failCalls("release", Integer.MAX_VALUE);
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> IdempotencyEngineTest.this.engine.execute(operation(Receipt.class, null), "k1", "p",
						() -> {
							throw new IllegalStateException("database down");
						}))
				.satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
					.isInstanceOf(IdempotencyStoreException.class));
			assertThat(this.store.calls("release")).isOne();
		}

		@Test
		void anAsynchronousFailureIsRetriedOffTheThreadThatSettledItUntilItIsRecorded() throws Throwable {
			this.store.failCalls("fail", Integer.MAX_VALUE);
			IdempotentOperation operation = operation(new ParameterizedTypeReference<CompletableFuture<Receipt>>() {
			}.getType(), null);
			CompletableFuture<Receipt> pending = new CompletableFuture<>();
			CompletableFuture<?> result = (CompletableFuture<?>) IdempotencyEngineTest.this.engine.execute(operation,
					"k1", "p", () -> pending);
			assertTimeoutPreemptively(Duration.ofSeconds(10),
					() -> pending.completeExceptionally(new CardDeclinedException("declined: 1")));
			// the first retry comes within 5 ms, the second not before 7.5 ms
			IdempotencyEngineTest.this.time.advance(Duration.ofMillis(5));
			assertThat(this.store.calls("fail")).isEqualTo(2);
			assertThat(result).isNotDone();
			this.store.failCalls("fail", 0);
			advanceUntilDone(result);
			assertThat(result).failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(java.util.concurrent.ExecutionException.class)
				.withCauseInstanceOf(CardDeclinedException.class)
				.satisfies((ex) -> assertThat(ex.getCause().getSuppressed()).isEmpty());
			assertThat(this.store.find(this.id).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
			assertThat(this.store.calls("release")).isZero();
		}

		@Test
		void anAsynchronousFailureNeverRecordedKeepsTheKeyInProgress() throws Throwable {
			this.store.failCalls("fail", Integer.MAX_VALUE);
			IdempotentOperation operation = operation(new ParameterizedTypeReference<CompletableFuture<Receipt>>() {
			}.getType(), Duration.ofMillis(50));
			IdempotencyEngine.Action decline = () -> CompletableFuture.failedFuture(
					new CardDeclinedException("declined: " + IdempotencyEngineTest.this.runs.incrementAndGet()));
			CompletableFuture<?> result = (CompletableFuture<?>) IdempotencyEngineTest.this.engine.execute(operation,
					"k1", "p", decline);
			advanceUntilDone(result);
			assertThat(result).failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(java.util.concurrent.ExecutionException.class)
				.withCauseInstanceOf(CardDeclinedException.class)
				.satisfies((ex) -> assertThat(ex.getCause().getSuppressed()).singleElement()
					.isInstanceOf(IdempotencyStoreException.class));
			assertThat(this.store.calls("fail")).isGreaterThan(1);
			// not released: the redelivery finds it in progress instead of running it again
			assertThat(this.store.calls("release")).isZero();
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> IdempotencyEngineTest.this.engine.execute(operation, "k1", "p", decline));
			assertThat(IdempotencyEngineTest.this.runs).hasValue(1);
		}

	}

	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

	@Nested
	class Leases {

		@Test
		void lateCompletionAfterATakeoverIsRefused() {
			RecordId id = new RecordId(WORKFLOW, "k1");
			assertThatExceptionOfType(IdempotencyLeaseLostException.class)
				.isThrownBy(() -> IdempotencyEngineTest.this.engine.execute(operation(String.class), "k1", null, () -> {
					IdempotencyEngineTest.this.clock.advance(Duration.ofSeconds(31));
					ClaimResult takeover = IdempotencyEngineTest.this.store.claim(new ClaimRequest(id, "other", null,
							Duration.ofSeconds(30), Duration.ofDays(1)));
					assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
					return "too late";
				}))
				.withMessageContaining("was not stored");
			IdempotencyRecord record = IdempotencyEngineTest.this.store.find(id).orElseThrow();
			assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
			assertThat(record.owner()).isEqualTo("other");
			assertThat(counter(IdempotencyMeters.LEASE_LOST)).isOne();
		}

		@Test
		void savingARecoveryPointAfterATakeoverFails() {
			RecordId id = new RecordId(WORKFLOW, "k1");
			assertThatExceptionOfType(IdempotencyLeaseLostException.class)
				.isThrownBy(() -> IdempotencyEngineTest.this.engine.execute(operation(void.class), "k1", null, () -> {
					IdempotencyEngineTest.this.clock.advance(Duration.ofSeconds(31));
					IdempotencyEngineTest.this.store.claim(new ClaimRequest(id, "other", null, Duration.ofSeconds(30),
							Duration.ofDays(1)));
					IdempotencyContext.current().saveRecoveryPoint("step-1");
					return null;
				}));
			assertThat(IdempotencyEngineTest.this.store.find(id).orElseThrow().recoveryPoint()).isNull();
			assertThat(counter(IdempotencyMeters.LEASE_LOST)).isOne();
		}

		/**
		 * A store that reads the engine's time: a lease runs out as the engine's time moves.
		 */
		private CountingIdempotencyStore storeOnEngineTime() {
			return new CountingIdempotencyStore(new MemoryIdempotencyStore(IdempotencyEngineTest.this.time));
		}

		@Test
		void runningClaimIsRenewedSoItIsNeverTakenOver() throws Exception {
			CountingIdempotencyStore counting = storeOnEngineTime();
			IdempotencyEngineTest.this.engine = engine(counting, EngineSettings.defaults());
			IdempotentOperation operation = IdempotencyEngineTest.this.engine
				.prepare(OperationDefinition.of(WORKFLOW, String.class)
				.fingerprinted(false)
				.leaseTtl(Duration.ofMillis(300))
				.build());
			CountDownLatch started = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			CompletableFuture<Object> slow = CompletableFuture.supplyAsync(() -> {
				try {
					return IdempotencyEngineTest.this.engine.execute(operation, "slow", null, () -> {
						started.countDown();
						finish.await();
						return "done";
					});
				}
				catch (Throwable ex) {
					throw new IllegalStateException(ex);
				}
			});
			assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
			// a second, three leases long, renewed every 100 ms
			for (int step = 0; step < 10; step++) {
				IdempotencyEngineTest.this.time.advance(Duration.ofMillis(100));
			}
			assertThat(counting.calls("renew")).isEqualTo(10);
			ClaimResult other = counting.claim(new ClaimRequest(new RecordId(WORKFLOW, "slow"), "other", null,
					Duration.ofMillis(300), Duration.ofDays(1)));
			assertThat(other.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
			finish.countDown();
			assertThat(slow.get(10, TimeUnit.SECONDS)).isEqualTo("done");
			assertThat(counting.find(new RecordId(WORKFLOW, "slow")).orElseThrow().status())
				.isEqualTo(RecordStatus.COMPLETED);
			IdempotencyEngineTest.this.time.advance(Duration.ofSeconds(1));
			assertThat(counting.calls("renew")).isEqualTo(10);
		}

		@Test
		void withoutRenewalAStalledClaimIsTakenOverWithinOneLease() throws Exception {
			IdempotencyEngineTest.this.engine = engine(storeOnEngineTime(), EngineSettings.builder()
					.leaseTtl(Duration.ofMillis(200))
					.leaseRenewal(false)
					.onInProgress(InProgressPolicy.REJECT)
					.waitTimeout(Duration.ofSeconds(1))
					.build());
			IdempotentOperation operation = operation(String.class);
			CountDownLatch started = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			CompletableFuture<Object> stalled = CompletableFuture.supplyAsync(() -> {
				try {
					return IdempotencyEngineTest.this.engine.execute(operation, "k1", null, () -> {
						started.countDown();
						finish.await();
						return "stalled";
					});
				}
				catch (Throwable ex) {
					return ex;
				}
			});
			assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
			IdempotencyEngineTest.this.time.advance(Duration.ofMillis(199));
			assertThatExceptionOfType(IdempotencyInProgressException.class).isThrownBy(() -> attempt(operation));
			IdempotencyEngineTest.this.time.advance(Duration.ofMillis(1));
			assertThat(attempt(operation)).isEqualTo("attempt 2");
			finish.countDown();
			assertThat(stalled.get(10, TimeUnit.SECONDS)).isInstanceOf(IdempotencyLeaseLostException.class);
		}

	}

	private @Nullable Object attempt(IdempotentOperation operation) throws Exception {
		try {
			return this.engine.execute(operation, "k1", null, () -> "attempt " + IdempotencyContext.current().attempt());
		}
		catch (Exception | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Nested
	class ResultTypes {

		@Test
		void typeJacksonCannotReadBackIsRefusedWhenPrepared() {
			assertThatIllegalStateException().isThrownBy(() -> operation(Runnable.class))
				.withMessageContaining("abstract type");
			assertThatIllegalStateException().isThrownBy(() -> operation(NoCreator.class))
				.withMessageContaining("constructor");
		}

		@Test
		void typeJacksonCannotWriteIsRefusedWhenPrepared() {
			JsonMapper strict = JsonMapper.builder()
				.enable(tools.jackson.databind.SerializationFeature.FAIL_ON_EMPTY_BEANS)
				.build();
			assertThatIllegalStateException().isThrownBy(() -> ResultCodec.forType(strict, Empty.class))
				.withMessageContaining("no properties");
			assertThat(ResultCodec.forType(IdempotencyEngineTest.this.jsonMapper, Empty.class).write(new Empty()))
				.isEqualTo("{}");
		}

		static final class NoCreator {

			private final String value;

			NoCreator(String value, int other) {
				this.value = value + other;
			}

			public String getValue() {
				return this.value;
			}

		}

		static final class Empty {

		}

	}

}
