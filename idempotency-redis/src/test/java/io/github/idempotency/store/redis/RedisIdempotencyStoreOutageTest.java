package io.github.idempotency.store.redis;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.observe.StoreOperation;
import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testfixtures.FailedStoreCall;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The Redis store on a private server that the tests stop and start: outages reach the
 * engine as store errors, and the scripts come back after a restart or a
 * {@code SCRIPT FLUSH}.
 */
class RedisIdempotencyStoreOutageTest {

	private static final Duration RETENTION = Duration.ofHours(1);

	/** Every write on disk before it is answered: what it held before a stop, it holds after the start. */
	private final RedisServerProcess server = new RedisServerProcess("--appendonly", "yes", "--appendfsync", "always")
		.start();

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private LettuceConnectionFactory connectionFactory;

	private RedisIdempotencyStore store;

	@BeforeEach
	void connect() {
		this.connectionFactory = RedisConnections.standalone(this.server.url());
		this.store = new RedisIdempotencyStore(this.connectionFactory, "outage", Clock.systemUTC());
	}

	@AfterEach
	void disconnect() {
		this.connectionFactory.destroy();
		this.server.close();
	}

	@Test
	void failClosedThrowsAndRunsNothingWhileRedisIsDown() {
		IdempotencyEngine engine = engine(StoreUnavailablePolicy.FAIL_CLOSED);
		this.server.stop();
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> run(engine, "k1"));
		assertThat(this.runs).isEmpty();
	}

	@Test
	void failOpenRunsAndCountsAStoreErrorWhileRedisIsDown() throws Throwable {
		IdempotencyEngine engine = engine(StoreUnavailablePolicy.FAIL_OPEN);
		this.server.stop();
		assertThat(run(engine, "k1")).isEqualTo("ran k1");
		assertThat(this.runs.get("k1")).hasValue(1);
		assertThat(this.registry.get(IdempotencyMeters.REQUESTS)
			.tag(IdempotencyMeters.TAG_OUTCOME, "store_error")
			.counter()
			.count()).isEqualTo(1);
	}

	@Test
	void afterARestartEveryKeyCompletesExactlyOnce() throws Throwable {
		IdempotencyEngine engine = engine(StoreUnavailablePolicy.FAIL_CLOSED);
		run(engine, "before");
		this.server.stop();
		List<String> keys = List.of("k1", "k2", "k3", "k4", "k5");
		for (String key : keys) {
			assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> run(engine, key));
		}
		this.server.start();
		awaitReconnected();
		for (int round = 0; round < 3; round++) {
			for (String key : keys) {
				assertThat(run(engine, key)).isEqualTo("ran " + key);
			}
		}
		assertThat(this.runs).containsOnlyKeys(concat("before", keys));
		assertThat(this.runs.values()).allSatisfy((count) -> assertThat(count).hasValue(1));
	}

	@ParameterizedTest(name = "asynchronous result: {0}")
	@ValueSource(booleans = { false, true })
	void aResultNotStoredWhileRedisIsDownIsStoredOnceItIsBackSoTheKeyNeverRunsTwice(boolean async) throws Throwable {
		FailedStoreCall completionFailed = new FailedStoreCall(StoreOperation.COMPLETE);
		ExecutorService restarter = Executors.newSingleThreadExecutor();
		try (IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseRenewal(false)
						.retention(RETENTION)
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ZERO)
						.build(),
				completionFailed)) {
			Object result = run(engine, "k1", async, () -> {
				// the claim is stored; Redis goes away before the result is, and comes back once it was refused
				this.server.stop();
				restarter.execute(() -> {
					try {
						completionFailed.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					this.server.start();
				});
			});
			assertThat(result).isEqualTo("ran k1");
			assertThat(completionFailed.happened()).isTrue();
			assertThat(run(engine, "k1", async, () -> {
			})).isEqualTo("ran k1");
		}
		finally {
			restarter.shutdownNow();
			assertThat(restarter.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(this.runs.get("k1")).hasValue(1);
		assertThat(this.store.find(id("k1")).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@ParameterizedTest(name = "asynchronous result: {0}")
	@ValueSource(booleans = { false, true })
	void aPermanentFailureNotRecordedWhileRedisIsDownIsRecordedOnceItIsBackSoTheRedeliveryReplaysIt(boolean async)
			throws Throwable {
		FailedStoreCall failureNotRecorded = new FailedStoreCall(StoreOperation.FAIL);
		ExecutorService restarter = Executors.newSingleThreadExecutor();
		AtomicInteger runs = new AtomicInteger();
		try (IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseRenewal(false)
						.retention(RETENTION)
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ZERO)
						.build(),
				failureNotRecorded)) {
			Type resultType = async ? new ParameterizedTypeReference<CompletableFuture<String>>() {
			}.getType() : String.class;
			IdempotentOperation operation = engine.prepare(OperationDefinition.of("outage", resultType)
				.fingerprinted(false)
				.recordFailureFor(List.of(CardDeclinedException.class))
				.build());
			IdempotencyEngine.Action decline = () -> {
				CardDeclinedException declined = new CardDeclinedException("declined: " + runs.incrementAndGet());
				if (runs.get() == 1) {
					// the claim is stored; Redis goes away before the failure is, and comes back once that was refused
					this.server.stop();
					restarter.execute(() -> {
						try {
							failureNotRecorded.await();
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
						this.server.start();
					});
				}
				if (async) {
					return CompletableFuture.failedFuture(declined);
				}
				throw declined;
			};
			assertThatExceptionOfType(CardDeclinedException.class).isThrownBy(() -> settled(async,
					engine.execute(operation, "k1", null, decline)))
				.withMessage("declined: 1")
				.satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
			assertThat(failureNotRecorded.happened()).isTrue();
			assertThatExceptionOfType(IdempotentFailureReplayedException.class)
				.isThrownBy(() -> settled(async, engine.execute(operation, "k1", null, decline)))
				.satisfies((ex) -> assertThat(ex.getOriginalMessage()).isEqualTo("declined: 1"));
		}
		finally {
			restarter.shutdownNow();
			assertThat(restarter.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(runs).hasValue(1);
		assertThat(this.store.find(id("k1")).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
	}

	@Test
	void aCompletionThatTimedOutButWasAppliedIsNotReportedAsALostLease() throws Throwable {
		FailedStoreCall completionFailed = new FailedStoreCall(StoreOperation.COMPLETE);
		ExecutorService unpauser = Executors.newSingleThreadExecutor();
		LettuceConnectionFactory admin = RedisConnections.standalone(this.server.url());
		try (IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseRenewal(false)
						.retention(RETENTION)
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ZERO)
						.build(),
				completionFailed)) {
			// the scripts loaded, so that the held completion runs as sent (not answered NOSCRIPT)
			run(engine, "k0");
			Object result = run(engine, "k1", false, () -> {
				// Redis holds the completion past the client's timeout, then runs it: only its answer is lost
				try (RedisConnection connection = admin.getConnection()) {
					connection.execute("CLIENT", bytes("PAUSE"), bytes("60000"), bytes("WRITE"));
				}
				unpauser.execute(() -> {
					try {
						completionFailed.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					try (RedisConnection connection = admin.getConnection()) {
						connection.execute("CLIENT", bytes("UNPAUSE"));
					}
				});
			});
			// stored by the attempt that timed out, found by the next one: no lost lease thrown
			assertThat(result).isEqualTo("ran k1");
			assertThat(completionFailed.happened()).isTrue();
		}
		finally {
			unpauser.shutdownNow();
			assertThat(unpauser.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
			admin.destroy();
		}
		assertThat(this.store.find(id("k1")).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void scriptsSurviveAScriptFlush() {
		ClaimHandle claim = this.store.claim(request("k1", "owner-1")).acquiredHandle();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.scriptingCommands().scriptFlush();
		}
		assertThat(claim.renew()).isTrue();
		assertThat(claim.complete("\"done\"")).isTrue();
		assertThat(this.store.claim(request("k1", "owner-2")).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
	}

	@Test
	void scriptsSurviveARestartOfTheServer() {
		assertThat(this.store.claim(request("k1", "owner-1")).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		this.server.stop();
		this.server.start();
		awaitReconnected();
		assertThat(this.store.claim(request("k2", "owner-2")).acquiredHandle().fail(new IllegalStateException("no")))
			.isTrue();
		assertThat(this.store.claim(request("k2", "owner-3")).outcome()).isEqualTo(ClaimOutcome.FAILED);
	}

	private void awaitReconnected() {
		await().atMost(30, TimeUnit.SECONDS)
			.pollInterval(Duration.ofMillis(50))
			.ignoreExceptions()
			.until(() -> this.store.find(id("probe")).isEmpty());
	}

	private IdempotencyEngine engine(StoreUnavailablePolicy policy) {
		EngineSettings settings = EngineSettings.builder()
				.leaseRenewal(false)
				.retention(RETENTION)
				.onInProgress(InProgressPolicy.REJECT)
				.waitTimeout(Duration.ZERO)
				.storeUnavailable(policy)
				.build();
		return new IdempotencyEngine(this.store, JsonMapper.builder().build(), settings,
				new MicrometerIdempotencyObserver(this.registry, this.store.backend()));
	}

	private Object run(IdempotencyEngine engine, String key) throws Throwable {
		return run(engine, key, false, () -> {
		});
	}

	/**
	 * Runs the operation of {@code key}, which calls {@code during}; an asynchronous result
	 * is already settled when the engine gets it, and waited for.
	 */
	private Object run(IdempotencyEngine engine, String key, boolean async, Runnable during) throws Throwable {
		Type resultType = async ? new ParameterizedTypeReference<CompletableFuture<String>>() {
		}.getType() : String.class;
		IdempotentOperation operation = engine.prepare(OperationDefinition.of("outage", resultType)
			.fingerprinted(false)
			.build());
		Object result = engine.execute(operation, key, null, () -> {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			during.run();
			return async ? CompletableFuture.completedFuture("ran " + key) : "ran " + key;
		});
		return async ? ((CompletableFuture<?>) result).get(30, TimeUnit.SECONDS) : result;
	}

	/** {@code result}, or what it settled with when {@code async}. */
	private static @Nullable Object settled(boolean async, @Nullable Object result) throws Throwable {
		if (!async) {
			return result;
		}
		try {
			// longer than the lease: the result settles once the retries end, if not before
			return ((CompletableFuture<?>) result).get(60, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			throw ex.getCause();
		}
	}

	private static String[] concat(String first, List<String> rest) {
		return java.util.stream.Stream.concat(java.util.stream.Stream.of(first), rest.stream())
			.toArray(String[]::new);
	}

	private static RecordId id(String key) {
		return new RecordId("outage", key);
	}

	private static ClaimRequest request(String key, String owner) {
		return new ClaimRequest(id(key), owner, null, Duration.ofSeconds(30), RETENTION);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

}
