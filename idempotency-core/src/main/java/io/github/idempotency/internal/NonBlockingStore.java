package io.github.idempotency.internal;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordId;

/**
 * The engine's side of a {@link ReactiveIdempotencyStore}: a claim whose answer arrives
 * without a thread held, subscribed with the caller's Reactor context (where a store finds
 * the caller's reactive transaction), and answered as the blocking SPI's
 * {@link ClaimResult}, whose handle is a {@link NonBlockingClaim}. The only class of the
 * engine that names Reactor's types for a store.
 */
final class NonBlockingStore {

	private final ReactiveIdempotencyStore store;

	NonBlockingStore(ReactiveIdempotencyStore store) {
		this.store = store;
	}

	/**
	 * Claims, subscribed with {@code context}.
	 * @param request what to claim
	 * @param context the caller's {@code ContextView}, or {@code null} for none
	 * @return the claim's answer
	 */
	CompletableFuture<ClaimResult> claim(ClaimRequest request, @Nullable Object context) {
		ContextView view = (context != null) ? (ContextView) context : Context.empty();
		return this.store.claim(request)
			.contextWrite(view)
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("The store answered the claim of "
					+ request.id() + " with nothing")))
			.map((result) -> blocking(result, view))
			.toFuture();
	}

	private ClaimResult blocking(ReactiveClaimResult result, ContextView context) {
		ReactiveClaimHandle handle = result.handle();
		return new ClaimResult(result.outcome(), result.record(),
				(handle != null) ? new Claim(handle, this.store, context) : null);
	}

	/** An acquired claim: each step subscribed with the claim's context. */
	private record Claim(ReactiveClaimHandle handle, ReactiveIdempotencyStore store,
			ContextView context) implements NonBlockingClaim {

		@Override
		public CompletableFuture<Boolean> store(Ending ending) {
			return answer(step(ending)).toFuture();
		}

		private Mono<Boolean> step(Ending ending) {
			if (ending instanceof Ending.Completed completed) {
				return this.handle.complete(completed.response());
			}
			if (ending instanceof Ending.Failed failed) {
				return this.handle.fail(failed.failure());
			}
			if (ending instanceof Ending.Released released) {
				return this.handle.release(released.failure());
			}
			return this.handle.abandon();
		}

		@Override
		public CompletableFuture<Optional<IdempotencyRecord>> find(RecordId id) {
			return this.store.find(id).contextWrite(this.context).map(Optional::of).defaultIfEmpty(Optional.empty())
				.toFuture();
		}

		@Override
		public boolean complete(@Nullable String response) {
			return block(this.handle.complete(response));
		}

		@Override
		public boolean fail(Throwable failure) {
			return block(this.handle.fail(failure));
		}

		@Override
		public boolean release(Throwable failure) {
			return block(this.handle.release(failure));
		}

		@Override
		public boolean abandon() {
			return block(this.handle.abandon());
		}

		@Override
		public boolean joinsTransaction() {
			return this.handle.joinsTransaction();
		}

		@Override
		public boolean renew() {
			return block(this.handle.renew());
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			return block(this.handle.saveRecoveryPoint(recoveryPoint));
		}

		private Mono<Boolean> answer(Mono<Boolean> step) {
			return step.contextWrite(this.context)
				.switchIfEmpty(Mono.error(() -> new IllegalStateException("The store answered a step with nothing")));
		}

		private boolean block(Mono<Boolean> step) {
			return Objects.requireNonNull(answer(step).block());
		}

	}

}
