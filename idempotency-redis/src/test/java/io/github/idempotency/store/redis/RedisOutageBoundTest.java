package io.github.idempotency.store.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisOutage;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bound on a store outage (README, docs/semantics.md), on a private Redis server with
 * two instances (two engines, two connection factories): an outage shorter than
 * {@code lease-ttl - lease-renewal-interval - 500 ms} never runs an operation twice. The
 * outage begins at the worst moment, as the first instance starts a renewal (one interval
 * after the last one that succeeded, so its lease has {@code lease-ttl - interval} left),
 * and lasts a little less than the bound, while the second instance tries the key over and
 * over: once while the operation still runs, once when it returns during the outage (its
 * completion retried). Holding the outage for a set time is inherently timed (a restart
 * scheduled {@code HOLD} after the stop); everything else waits on conditions.
 */
class RedisOutageBoundTest {

	private static final Duration LEASE = Duration.ofSeconds(6);

	private static final Duration INTERVAL = Duration.ofSeconds(2);

	/** The bound: lease-ttl - lease-renewal-interval - 500 ms. */
	private static final Duration BOUND = LEASE.minus(INTERVAL).minusMillis(500);

	/**
	 * How long the server is down: just under the bound, less what the clients add to it
	 * (the server's start, then Lettuce's reconnect within 100 ms).
	 */
	private static final Duration HOLD = BOUND.minusMillis(1000);

	/** The renewal that begins the outage: the second, one interval after the first succeeded. */
	private static final int OUTAGE_AT = 2;

	private static final String KEY = "order-1";

	private static final String FIRST = "ran by the first instance";

	private static final String SECOND = "ran by the second instance";

	private static final String IN_PROGRESS = "in progress";

	private static final String STORE_ERROR = "store error";

	private final RedisOutage outage = new RedisOutage();

	private final LettuceConnectionFactory secondConnections = RedisConnections.standalone(this.outage.url());

	private final OutageAtRenewal firstStore = new OutageAtRenewal(
			new RedisIdempotencyStore(this.outage.connectionFactory(), "bound", Clock.systemUTC()));

	private final IdempotencyEngine first = engine(this.firstStore);

	private final IdempotencyEngine second = engine(
			new RedisIdempotencyStore(this.secondConnections, "bound", Clock.systemUTC()));

	private final AtomicInteger runs = new AtomicInteger();

	private final ExecutorService caller = Executors.newSingleThreadExecutor();

	@AfterEach
	void stop() throws InterruptedException {
		this.caller.shutdownNow();
		this.caller.awaitTermination(30, TimeUnit.SECONDS);
		this.first.close();
		this.second.close();
		this.secondConnections.destroy();
		this.outage.close();
	}

	@Test
	void anOutageJustShorterThanTheBoundWhileTheOperationRunsDoesNotRunItTwice() throws Exception {
		connectTheSecondInstance();
		CountDownLatch finish = new CountDownLatch(1);
		Future<Object> firstRun = this.caller.submit(() -> run(this.first, () -> {
			finish.await();
			return FIRST;
		}));
		Duration down = this.firstStore.outageOver().get(30, TimeUnit.SECONDS);
		assertThat(down).isLessThan(BOUND);
		// from the end of the outage, for longer than a lease: the first run holds the key
		await("the second instance answered (reconnected)").atMost(Duration.ofSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !STORE_ERROR.equals(secondTry()));
		await("the key held by the first run for a whole lease after the outage").during(LEASE.plusMillis(500))
			.atMost(LEASE.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.failFast("the second instance ran the operation", () -> this.runs.get() > 1)
			.until(() -> IN_PROGRESS.equals(secondTry()));
		finish.countDown();
		assertThat(firstRun.get(30, TimeUnit.SECONDS)).isEqualTo(FIRST);
		assertThat(secondTry()).isEqualTo(FIRST);
		assertThat(this.runs).hasValue(1);
		assertThat(this.firstStore.failedRenewals).as("renewals that failed during the outage").isPositive();
		assertThat(this.firstStore.leaseGap()).as("time between the last lease written before the outage and the "
				+ "first after it").isLessThan(LEASE);
	}

	@Test
	void anOutageJustShorterThanTheBoundWhenTheOperationReturnsDoesNotRunItTwice() throws Exception {
		connectTheSecondInstance();
		Future<Object> firstRun = this.caller.submit(() -> run(this.first, () -> {
			// it returns while Redis is down: its result is offered again until Redis is back
			this.firstStore.outageBegun.await();
			return FIRST;
		}));
		Duration down = this.firstStore.outageOver().get(30, TimeUnit.SECONDS);
		assertThat(down).isLessThan(BOUND);
		await("the second instance finds the first run's result").atMost(LEASE.plusSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.failFast("the second instance ran the operation", () -> this.runs.get() > 1)
			.until(() -> FIRST.equals(secondTry()));
		assertThat(firstRun.get(30, TimeUnit.SECONDS)).isEqualTo(FIRST);
		assertThat(this.runs).hasValue(1);
		assertThat(this.firstStore.failedCompletions).as("completions that failed during the outage").isPositive();
		assertThat(this.firstStore.leaseGap()).as("time between the last lease written before the outage and the "
				+ "completion").isLessThan(LEASE);
	}

	/** So that the second instance's connection is up before the outage, as a running instance's is. */
	private void connectTheSecondInstance() {
		assertThat(this.second.store().find(new RecordId("bound", "probe"))).isEmpty();
	}

	/**
	 * The second instance tries the key once.
	 * @return the result it got (the first run's, stored), {@link #SECOND} when it ran
	 * the operation, {@link #IN_PROGRESS} or {@link #STORE_ERROR}
	 */
	private String secondTry() throws Exception {
		try {
			return String.valueOf(run(this.second, () -> SECOND));
		}
		catch (IdempotencyInProgressException ex) {
			return IN_PROGRESS;
		}
		catch (IdempotencyStoreException ex) {
			return STORE_ERROR;
		}
	}

	private @Nullable Object run(IdempotencyEngine engine, IdempotencyEngine.Action body) throws Exception {
		IdempotentOperation operation = engine.prepare(OperationDefinition.of("bound", String.class)
			.fingerprinted(false)
			.build());
		try {
			return engine.execute(operation, KEY, null, () -> {
				this.runs.incrementAndGet();
				return body.proceed();
			});
		}
		catch (Exception | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static IdempotencyEngine engine(IdempotencyStore store) {
		return new IdempotencyEngine(store, JsonMapper.builder().build(),
				EngineSettings.builder()
					.leaseTtl(LEASE)
					.leaseRenewalInterval(INTERVAL)
					.onInProgress(InProgressPolicy.REJECT)
					.waitTimeout(Duration.ZERO)
					.build(),
				IdempotencyObserver.NONE);
	}

	/**
	 * The first instance's store: the {@link #OUTAGE_AT}-th renewal stops Redis before it
	 * reaches it, for {@link #HOLD}; it notes when each lease was written (the start of the
	 * claim, renewal or completion that wrote it, no later than the time the store put in
	 * it).
	 */
	private final class OutageAtRenewal implements IdempotencyStore {

		private final IdempotencyStore delegate;

		private final AtomicInteger renewals = new AtomicInteger();

		private final CountDownLatch outageBegun = new CountDownLatch(1);

		private volatile @Nullable CompletableFuture<Duration> outageOver;

		private volatile long lastWriteBefore;

		private volatile long firstWriteAfter;

		private volatile int failedRenewals;

		private volatile int failedCompletions;

		OutageAtRenewal(IdempotencyStore delegate) {
			this.delegate = delegate;
		}

		CompletableFuture<Duration> outageOver() throws InterruptedException {
			assertThat(this.outageBegun.await(30, TimeUnit.SECONDS)).as("outage begun").isTrue();
			return this.outageOver;
		}

		Duration leaseGap() {
			assertThat(this.firstWriteAfter).as("a lease written after the outage").isNotZero();
			return Duration.ofNanos(this.firstWriteAfter - this.lastWriteBefore);
		}

		private synchronized void written(long started) {
			if (this.outageOver == null) {
				this.lastWriteBefore = started;
			}
			else if (this.firstWriteAfter == 0) {
				this.firstWriteAfter = started;
			}
		}

		@Override
		public ClaimResult claim(ClaimRequest request) {
			long started = System.nanoTime();
			ClaimResult result = this.delegate.claim(request);
			if (result.handle() == null) {
				return result;
			}
			written(started);
			return ClaimResult.acquired(result.record(), new Claim(result.handle()));
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

		private final class Claim implements ClaimHandle {

			private final ClaimHandle delegate;

			Claim(ClaimHandle delegate) {
				this.delegate = delegate;
			}

			@Override
			public boolean renew() {
				if (OutageAtRenewal.this.renewals.incrementAndGet() == OUTAGE_AT) {
					OutageAtRenewal.this.outageOver = RedisOutageBoundTest.this.outage.beginFor(HOLD);
					OutageAtRenewal.this.outageBegun.countDown();
				}
				long started = System.nanoTime();
				try {
					boolean renewed = this.delegate.renew();
					if (renewed) {
						written(started);
					}
					return renewed;
				}
				catch (RuntimeException ex) {
					OutageAtRenewal.this.failedRenewals++;
					throw ex;
				}
			}

			@Override
			public boolean complete(@Nullable String response) {
				long started = System.nanoTime();
				try {
					boolean completed = this.delegate.complete(response);
					if (completed) {
						written(started);
					}
					return completed;
				}
				catch (RuntimeException ex) {
					OutageAtRenewal.this.failedCompletions++;
					throw ex;
				}
			}

			@Override
			public boolean fail(Throwable failure) {
				return this.delegate.fail(failure);
			}

			@Override
			public boolean release(Throwable failure) {
				return this.delegate.release(failure);
			}

			@Override
			public boolean saveRecoveryPoint(String recoveryPoint) {
				return this.delegate.saveRecoveryPoint(recoveryPoint);
			}

		}

	}

}
