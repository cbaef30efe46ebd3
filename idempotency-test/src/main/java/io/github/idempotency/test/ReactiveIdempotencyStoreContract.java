package io.github.idempotency.test;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract every {@link ReactiveIdempotencyStore} must pass, on its real server: every
 * case of {@link IdempotencyStoreContract}, written once, run through
 * {@link ReactiveIdempotencyStore#blocking} (the same answers and the same fencing), and the
 * cases only a non-blocking store has: nothing happens before a step is subscribed, and no
 * step blocks a non-blocking thread, which BlockHound checks (installed by this class, which
 * records what it sees; on Java 13 and later the test JVM needs
 * {@code -XX:+AllowRedefinitionToAddDeleteMethods}).
 *
 * <pre class="code">
 * class PostgresR2dbcIdempotencyStoreTest extends ReactiveIdempotencyStoreContract {
 *     &#64;Override
 *     protected ReactiveIdempotencyStore createReactiveStore(Clock clock) {
 *         return new R2dbcIdempotencyStore(connectionFactory, "idempotency_record", Duration.ofSeconds(5), clock);
 *     }
 * }
 * </pre>
 */
public abstract class ReactiveIdempotencyStoreContract extends IdempotencyStoreContract {

	@SuppressWarnings("NullAway.Init") // made before each test, by createStore
	private ReactiveIdempotencyStore reactiveStore;

	/**
	 * Creates the store under test on {@code clock}.
	 * @param clock the clock the store must read the time from
	 * @return the store
	 */
	protected abstract ReactiveIdempotencyStore createReactiveStore(Clock clock);

	/**
	 * Releases what {@link #createReactiveStore(Clock)} created. Nothing by default.
	 * @param store the store
	 */
	protected void destroyReactiveStore(ReactiveIdempotencyStore store) {
	}

	/**
	 * The blocking calls made on a non-blocking thread since the last check: recorded, not
	 * thrown, so that only {@link #noStepBlocksANonBlockingThread} asks about them and no other
	 * case has a driver's thread broken by an error thrown inside it (a lock a pool takes
	 * under contention, in a race of 16 threads).
	 */
	private static final java.util.List<String> blockingCalls = new java.util.concurrent.CopyOnWriteArrayList<>();

	@BeforeAll
	static void installBlockHound() {
		BlockHound.install((builder) -> builder.blockingMethodCallback((method) -> blockingCalls
			.add(method + " on " + Thread.currentThread().getName())));
	}

	@Override
	protected final IdempotencyStore createStore(Clock clock) {
		this.reactiveStore = createReactiveStore(clock);
		return ReactiveIdempotencyStore.blocking(this.reactiveStore);
	}

	@Override
	protected final void destroyStore(IdempotencyStore store) {
		destroyReactiveStore(this.reactiveStore);
	}

	/**
	 * The store under test, made by {@link #createReactiveStore(Clock)} for the current test.
	 * @return the store
	 */
	protected ReactiveIdempotencyStore reactiveStore() {
		return this.reactiveStore;
	}

	@Test
	void nothingIsClaimedBeforeTheClaimIsSubscribed() {
		Mono<ReactiveClaimResult> claim = this.reactiveStore.claim(request(id("lazy"), "owner-1", null));
		assertThat(store().find(id("lazy"))).as("a claim not subscribed").isEmpty();
		assertThat(java.util.Objects.requireNonNull(claim.block()).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(store().find(id("lazy"))).isPresent();
	}

	@Test
	void noStepBlocksANonBlockingThread() {
		blockingCalls.clear();
		ClaimRequest first = request(id("first"), "owner-1", "fp");
		ReactiveClaimHandle handle = onEventLoop(this.reactiveStore.claim(first)).acquiredHandle();
		assertThat(onEventLoop(handle.renew())).isTrue();
		assertThat(onEventLoop(handle.saveRecoveryPoint("half"))).isTrue();
		assertThat(onEventLoop(handle.complete("{}"))).isTrue();
		assertThat(onEventLoop(this.reactiveStore.claim(request(id("first"), "owner-2", "fp"))).outcome())
			.isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(onEventLoop(this.reactiveStore.find(id("first"))).status()).isEqualTo(RecordStatus.COMPLETED);

		List<ReactiveClaimResult> batch = onEventLoop(this.reactiveStore.claimAll(
				List.of(request(id("a"), "owner-3", null), request(id("b"), "owner-3", null))));
		assertThat(batch).extracting(ReactiveClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		assertThat(onEventLoop(this.reactiveStore.completeAll(
				List.of(batch.get(0).acquiredHandle(), batch.get(1).acquiredHandle()), List.of("1", "2"))))
			.containsOnly(true);

		ReactiveClaimHandle failing = onEventLoop(this.reactiveStore.claim(request(id("c"), "owner-4", null)))
			.acquiredHandle();
		assertThat(onEventLoop(failing.fail(new IllegalArgumentException("declined")))).isTrue();
		ReactiveClaimHandle released = onEventLoop(this.reactiveStore.claim(request(id("d"), "owner-5", null)))
			.acquiredHandle();
		assertThat(onEventLoop(released.release(new IllegalStateException("again")))).isTrue();
		ReactiveClaimHandle abandoned = onEventLoop(this.reactiveStore.claim(request(id("e"), "owner-6", null)))
			.acquiredHandle();
		assertThat(onEventLoop(abandoned.abandon())).isTrue();
		assertThat(onEventLoop(this.reactiveStore.delete(id("first")))).isTrue();
		assertThat(blockingCalls).as("blocking calls on non-blocking threads").isEmpty();
	}

	/**
	 * Subscribes a step on a thread Reactor marks non-blocking, where BlockHound fails any
	 * blocking call, and waits for its answer on this one.
	 */
	private static <T> T onEventLoop(Mono<T> step) {
		AtomicReference<T> answer = new AtomicReference<>();
		Mono.defer(() -> step).subscribeOn(Schedulers.parallel()).doOnNext(answer::set).then().block();
		return java.util.Objects.requireNonNull(answer.get(), "the step answered nothing");
	}

}
