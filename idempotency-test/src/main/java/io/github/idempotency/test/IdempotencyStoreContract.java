package io.github.idempotency.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract every {@link IdempotencyStore} must pass, on its real server. A store's test
 * is a small subclass that creates the store on the given {@link Clock} (every
 * time-dependent case moves that clock instead of sleeping):
 *
 * <pre class="code">
 * class PostgresJdbcIdempotencyStoreTest extends IdempotencyStoreContract {
 *     &#64;Override
 *     protected IdempotencyStore createStore(Clock clock) {
 *         return new JdbcIdempotencyStore(dataSource, "idempotency_record", Duration.ofSeconds(5), clock);
 *     }
 * }
 * </pre>
 *
 * The subclass runs every case of the suite. The cases are kept by concern, each in an
 * interface of this package that this class implements: a claim and its answers, fencing
 * by owner, leases and recovery points, retention, keys and what is stored, racing claims,
 * batch claims and batch completions. Each test uses a workflow of its own, so the suite
 * may run against a server shared with other tests.
 */
public abstract class IdempotencyStoreContract implements ClaimCases, OwnerCases, LeaseCases, RetentionCases,
		KeyCases, RaceCases, BatchClaimCases, BatchCompletionCases {

	protected static final Duration LEASE = Duration.ofSeconds(30);

	protected static final Duration RETENTION = Duration.ofHours(1);

	protected static final int THREADS = 16;

	protected final MutableClock clock = new MutableClock(
			Instant.now().truncatedTo(ChronoUnit.MILLIS).plus(Duration.ofDays(1)));

	protected static final RuntimeException RETRYABLE = new IllegalStateException("the broker redelivers it");

	protected IdempotencyStore store;

	private final Map<String, ClaimHandle> handles = new ConcurrentHashMap<>();

	protected String workflow;

	/**
	 * Creates the store under test on {@code clock}.
	 * @param clock the clock the store must read the time from
	 * @return the store
	 */
	protected abstract IdempotencyStore createStore(Clock clock);

	/**
	 * Releases what {@link #createStore(Clock)} created. Nothing by default.
	 * @param store the store
	 */
	protected void destroyStore(IdempotencyStore store) {
	}

	@BeforeEach
	void createStoreUnderTest() {
		this.store = createStore(this.clock);
		this.workflow = "contract-" + UUID.randomUUID();
	}

	@AfterEach
	void destroyStoreUnderTest() {
		destroyStore(this.store);
	}

	/**
	 * The store under test, made by {@link #createStore(Clock)} for the current test.
	 * @return the store
	 */
	@Override
	public IdempotencyStore store() {
		return this.store;
	}

	/**
	 * The clock the store under test reads, moved by the tests.
	 * @return the clock
	 */
	@Override
	public MutableClock clock() {
		return this.clock;
	}

	/**
	 * The current test's workflow, of its own.
	 * @return the workflow
	 */
	@Override
	public String workflow() {
		return this.workflow;
	}

	/**
	 * The record id of {@code key} in the current test's workflow.
	 * @param key the key
	 * @return its id
	 */
	@Override
	public RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

	/**
	 * A request for {@code id} with the suite's lease and retention.
	 * @param id the record id
	 * @param owner the claim's owner
	 * @param fingerprint the payload's fingerprint, or {@code null}
	 * @return the request
	 */
	@Override
	public ClaimRequest request(RecordId id, String owner, @Nullable String fingerprint) {
		return new ClaimRequest(id, owner, fingerprint, LEASE, RETENTION);
	}

	/**
	 * Claims {@code key} for {@code owner}, keeping the handle of an acquired claim for
	 * {@link #handle(String)}.
	 * @param key the key in this test's workflow
	 * @param owner the claim's owner, unique within the test
	 * @param fingerprint the payload's fingerprint, or {@code null}
	 * @return the claim's answer
	 */
	@Override
	public ClaimResult claim(String key, String owner, @Nullable String fingerprint) {
		ClaimResult result = this.store.claim(request(id(key), owner, fingerprint));
		if (result.handle() != null) {
			this.handles.put(owner, result.handle());
		}
		return result;
	}

	/**
	 * Claims {@code key} for {@code owner} with the given lease and retention, keeping the
	 * handle of an acquired claim for {@link #handle(String)}.
	 * @param key the key in this test's workflow
	 * @param owner the claim's owner, unique within the test
	 * @param lease the claim's lease
	 * @param retention the claim's retention
	 * @return the claim's answer
	 */
	@Override
	public ClaimResult claim(String key, String owner, Duration lease, Duration retention) {
		ClaimResult result = this.store.claim(new ClaimRequest(id(key), owner, null, lease, retention));
		if (result.handle() != null) {
			this.handles.put(owner, result.handle());
		}
		return result;
	}

	/**
	 * Asserts that the finished record of {@code key} is kept for the retention from now
	 * (when it finished), at most for the retention from the end of its lease if that is
	 * later: a store may leave a record finished within its lease at the claim's expiry.
	 * @param key the key
	 * @param leaseEnd the end of its claim's (last) lease
	 * @return when it expires
	 */
	@Override
	public Instant assertKeptForTheRetention(String key, Instant leaseEnd) {
		Instant finishedAt = this.clock.instant();
		Instant expiresAt = this.store.find(id(key)).orElseThrow().expiresAt();
		Instant latest = (leaseEnd.isAfter(finishedAt) ? leaseEnd : finishedAt).plus(RETENTION);
		assertThat(expiresAt).as("kept for the retention after it finished, at most after its lease's end")
			.isBetween(finishedAt.plus(RETENTION), latest);
		return expiresAt;
	}

	/**
	 * The handle of the last claim {@code owner} acquired.
	 * @param owner the claim's owner
	 * @return its handle
	 */
	@Override
	public ClaimHandle handle(String owner) {
		ClaimHandle handle = this.handles.get(owner);
		assertThat(handle).as("the handle of " + owner).isNotNull();
		return handle;
	}

	/**
	 * Runs {@code task} on {@code threads} threads released at the same instant.
	 * @param <T> the result type
	 * @param threads how many threads
	 * @param task what each thread does, given its number
	 * @return the results, in thread order
	 * @throws Exception what a task threw
	 */
	@Override
	public <T> List<T> race(int threads, ThreadTask<T> task) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch ready = new CountDownLatch(threads);
			CountDownLatch go = new CountDownLatch(1);
			List<Future<T>> futures = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				int thread = i;
				futures.add(executor.submit(() -> {
					ready.countDown();
					go.await();
					return task.run(thread);
				}));
			}
			ready.await();
			go.countDown();
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get(60, TimeUnit.SECONDS));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
		}
	}

	/** The ways a claim is finished. */
	enum Finish {

		COMPLETE, COMPLETE_IN_A_BATCH, FAIL

	}

	/**
	 * What each thread of {@link #race(int, ThreadTask)} does.
	 * @param <T> its result type
	 */
	@FunctionalInterface
	public interface ThreadTask<T> {

		@Nullable T run(int thread) throws Exception;

	}

	/** A permanent failure of the tests' operations. */
	protected static class CardDeclinedException extends RuntimeException {

		public CardDeclinedException(@Nullable String message) {
			super(message);
		}

	}

}
