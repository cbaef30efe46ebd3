package io.github.idempotency.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * An {@link IdempotencyStore} seen as a {@link ReactiveIdempotencyStore}
 * ({@link ReactiveIdempotencyStore#of}): each step a task of the scheduler, which is where
 * the blocking store holds a thread while its server answers.
 */
final class ScheduledBlockingStore implements ReactiveIdempotencyStore {

	private final IdempotencyStore store;

	private final Scheduler scheduler;

	ScheduledBlockingStore(IdempotencyStore store, Scheduler scheduler) {
		this.store = store;
		this.scheduler = scheduler;
	}

	IdempotencyStore store() {
		return this.store;
	}

	@Override
	public Mono<ReactiveClaimResult> claim(ClaimRequest request) {
		return step(() -> reactive(this.store.claim(request)));
	}

	@Override
	public Mono<List<ReactiveClaimResult>> claimAll(List<ClaimRequest> requests) {
		return step(() -> {
			List<ReactiveClaimResult> results = new ArrayList<>(requests.size());
			this.store.claimAll(requests).forEach((result) -> results.add(reactive(result)));
			return results;
		});
	}

	@Override
	public Mono<List<Boolean>> completeAll(List<ReactiveClaimHandle> handles, List<@Nullable String> responses) {
		List<ClaimHandle> blocking = new ArrayList<>(handles.size());
		for (ReactiveClaimHandle handle : handles) {
			if (!(handle instanceof Handle own)) {
				return ReactiveIdempotencyStore.super.completeAll(handles, responses);
			}
			blocking.add(own.handle);
		}
		return step(() -> this.store.completeAll(blocking, responses));
	}

	@Override
	public Mono<IdempotencyRecord> find(RecordId id) {
		return Mono.fromCallable(() -> this.store.find(id).orElse(null)).subscribeOn(this.scheduler);
	}

	@Override
	public Mono<Boolean> delete(RecordId id) {
		return step(() -> this.store.delete(id));
	}

	@Override
	public String backend() {
		return this.store.backend();
	}

	@Override
	public String toString() {
		return this.store.toString();
	}

	private ReactiveClaimResult reactive(ClaimResult result) {
		ClaimHandle handle = result.handle();
		return new ReactiveClaimResult(result.outcome(), result.record(),
				(handle != null) ? new Handle(handle, this) : null);
	}

	private <T> Mono<T> step(Callable<T> step) {
		return Mono.fromCallable(step).subscribeOn(this.scheduler);
	}

	/** An acquired claim's steps, each a task of the scheduler. */
	private record Handle(ClaimHandle handle, ScheduledBlockingStore store) implements ReactiveClaimHandle {

		@Override
		public Mono<Boolean> complete(@Nullable String response) {
			return this.store.step(() -> this.handle.complete(response));
		}

		@Override
		public Mono<Boolean> fail(Throwable failure) {
			return this.store.step(() -> this.handle.fail(failure));
		}

		@Override
		public Mono<Boolean> release(Throwable failure) {
			return this.store.step(() -> this.handle.release(failure));
		}

		@Override
		public Mono<Boolean> abandon() {
			return this.store.step(this.handle::abandon);
		}

		@Override
		public Mono<Boolean> renew() {
			return this.store.step(this.handle::renew);
		}

		@Override
		public Mono<Boolean> saveRecoveryPoint(String recoveryPoint) {
			return this.store.step(() -> this.handle.saveRecoveryPoint(recoveryPoint));
		}

		@Override
		public boolean joinsTransaction() {
			return this.handle.joinsTransaction();
		}

	}

}
