package io.github.idempotency.store;

import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.util.Assert;

/**
 * The non-blocking storage SPI, beside {@link IdempotencyStore}: the same atomic steps with
 * the same answers and the same fencing, each a {@code Mono} that does nothing until it is
 * subscribed and holds no thread while the server answers. The engine uses it for what
 * settles without a thread of its own (a {@code Mono} or {@code CompletableFuture} result, a
 * WebFlux handler method); a blocking shape (a plain method, a listener) uses the same store
 * through {@link #blocking(ReactiveIdempotencyStore)}.
 * <p>
 * Each step is subscribed with the caller's Reactor context: a store whose claim can be
 * part of the caller's reactive transaction (the r2dbc store inside a
 * {@code TransactionalOperator} or a {@code @Transactional} method returning a {@code Mono})
 * finds it there and answers {@link ReactiveClaimHandle#joinsTransaction()}.
 * <p>
 * What {@link IdempotencyStore} says of expired records, failures and refusals holds here:
 * a failure to reach the server is an error signal of an unchecked exception, a refusal an
 * {@code IllegalStateException} or {@code IllegalArgumentException}.
 * {@code ReactiveIdempotencyStoreContract} (in {@code idempotency-test}) runs the cases of
 * {@code IdempotencyStoreContract} against an implementation.
 */
public interface ReactiveIdempotencyStore {

	/**
	 * Claims the record, as {@link IdempotencyStore#claim(ClaimRequest)} does.
	 * @param request what to claim
	 * @return the outcome with the record it concerns, and for an acquired claim its handle
	 */
	Mono<ReactiveClaimResult> claim(ClaimRequest request);

	/**
	 * Claims several records, as {@link IdempotencyStore#claimAll(List)} does: each on its
	 * own, answered at the same position, the claims acquired given back when the store fails
	 * part way. The default claims one after the other; a store that can claim many records in
	 * one round trip should override it.
	 * @param requests what to claim
	 * @return one result per request, in the order of the requests
	 */
	default Mono<List<ReactiveClaimResult>> claimAll(List<ClaimRequest> requests) {
		return Mono.defer(() -> {
			List<ReactiveClaimResult> acquired = new java.util.concurrent.CopyOnWriteArrayList<>();
			return Flux.fromIterable(requests)
				.concatMap(this::claim)
				.doOnNext((result) -> {
					if (result.handle() != null) {
						acquired.add(result);
					}
				})
				.collectList()
				.onErrorResume((ex) -> Flux.fromIterable(acquired)
					.concatMap((result) -> result.acquiredHandle().abandon().onErrorResume((failure) -> {
						ex.addSuppressed(failure);
						return Mono.empty();
					}))
					.then(Mono.error(ex)));
		});
	}

	/**
	 * Completes several claims that this store acquired, as
	 * {@link IdempotencyStore#completeAll(List, List)} does: each on its own, answered at the
	 * same position; when one fails, the others are still tried and the first failure is
	 * signalled after them (the rest suppressed). The default completes one after the other.
	 * @param handles acquired claims of this store
	 * @param responses the serialized result of each claim, {@code null} for {@code void}
	 * @return for each handle whether its record was completed
	 */
	default Mono<List<Boolean>> completeAll(List<ReactiveClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		return Mono.defer(() -> {
			Throwable[] failure = new Throwable[1];
			return Flux.range(0, handles.size())
				.concatMap((i) -> handles.get(i).complete(responses.get(i)).onErrorResume((ex) -> {
					if (failure[0] == null) {
						failure[0] = ex;
					}
					else {
						failure[0].addSuppressed(ex);
					}
					return Mono.just(false);
				}))
				.collectList()
				.flatMap((completed) -> (failure[0] != null) ? Mono.error(failure[0]) : Mono.just(completed));
		});
	}

	/**
	 * Reads a record that has not expired.
	 * @param id the record
	 * @return the record, or empty
	 */
	Mono<IdempotencyRecord> find(RecordId id);

	/**
	 * Removes a record whatever its state or owner, as {@link IdempotencyStore#delete}.
	 * @param id the record
	 * @return {@code true} when a record was removed
	 */
	Mono<Boolean> delete(RecordId id);

	/**
	 * The name of this store's technology, used as the {@code backend} tag of metrics.
	 * @return a short lower-case name such as {@code r2dbc}
	 */
	default String backend() {
		return "custom";
	}

	/**
	 * The same store seen as an {@link IdempotencyStore}: each step waits for its answer, on
	 * the calling thread, which must be one that may block (never an event loop). For the
	 * shapes that hold a thread anyway (a plain method, a listener), and for
	 * {@code IdempotencyStoreContract}.
	 * @param store the non-blocking store
	 * @return a blocking view of it
	 */
	static IdempotencyStore blocking(ReactiveIdempotencyStore store) {
		return (store instanceof ScheduledBlockingStore scheduled) ? scheduled.store() : new BlockingReactiveStore(store);
	}

	/**
	 * A blocking store seen as a non-blocking one: each step a task of {@code scheduler},
	 * which holds a thread while the store's server answers (a bounded pool, never an event
	 * loop), or runs it where it is subscribed for a store that never waits on a server
	 * ({@code Schedulers.immediate()} for the {@code memory} store).
	 * @param store the blocking store
	 * @param scheduler where its steps run
	 * @return a non-blocking view of it
	 */
	static ReactiveIdempotencyStore of(IdempotencyStore store, Scheduler scheduler) {
		return (store instanceof BlockingReactiveStore view) ? view.store() : new ScheduledBlockingStore(store, scheduler);
	}

}
