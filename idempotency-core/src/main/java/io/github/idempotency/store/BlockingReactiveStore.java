package io.github.idempotency.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A {@link ReactiveIdempotencyStore} seen as an {@link IdempotencyStore}
 * ({@link ReactiveIdempotencyStore#blocking}): each step subscribed and waited for on the
 * calling thread.
 */
final class BlockingReactiveStore implements IdempotencyStore {

	private final ReactiveIdempotencyStore store;

	BlockingReactiveStore(ReactiveIdempotencyStore store) {
		this.store = store;
	}

	ReactiveIdempotencyStore store() {
		return this.store;
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		return blocking(get(this.store.claim(request)));
	}

	@Override
	public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		List<ClaimResult> results = new ArrayList<>(requests.size());
		get(this.store.claimAll(requests)).forEach((result) -> results.add(blocking(result)));
		return results;
	}

	@Override
	public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		List<ReactiveClaimHandle> reactive = new ArrayList<>(handles.size());
		for (ClaimHandle handle : handles) {
			if (!(handle instanceof Handle own)) {
				return IdempotencyStore.super.completeAll(handles, responses);
			}
			reactive.add(own.handle);
		}
		return get(this.store.completeAll(reactive, responses));
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return this.store.find(id).blockOptional();
	}

	@Override
	public boolean delete(RecordId id) {
		return get(this.store.delete(id));
	}

	@Override
	public String backend() {
		return this.store.backend();
	}

	@Override
	public String toString() {
		return "blocking " + this.store;
	}

	private static ClaimResult blocking(ReactiveClaimResult result) {
		ReactiveClaimHandle handle = result.handle();
		return new ClaimResult(result.outcome(), result.record(), (handle != null) ? new Handle(handle) : null);
	}

	private static <T> T get(Mono<T> step) {
		return Objects.requireNonNull(step.block(), "the store answered nothing");
	}

	/** An acquired claim's steps, each waited for. */
	private record Handle(ReactiveClaimHandle handle) implements ClaimHandle {

		@Override
		public boolean complete(@Nullable String response) {
			return get(this.handle.complete(response));
		}

		@Override
		public boolean fail(Throwable failure) {
			return get(this.handle.fail(failure));
		}

		@Override
		public boolean release(Throwable failure) {
			return get(this.handle.release(failure));
		}

		@Override
		public boolean abandon() {
			return get(this.handle.abandon());
		}

		@Override
		public boolean joinsTransaction() {
			return this.handle.joinsTransaction();
		}

		@Override
		public boolean renew() {
			return get(this.handle.renew());
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			return get(this.handle.saveRecoveryPoint(recoveryPoint));
		}

	}

}
