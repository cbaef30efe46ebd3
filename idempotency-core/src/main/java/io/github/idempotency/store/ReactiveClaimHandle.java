package io.github.idempotency.store;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * An acquired claim of a {@link ReactiveIdempotencyStore}: the steps of {@link ClaimHandle},
 * each a {@code Mono} that does nothing until subscribed, with the same fencing and the same
 * answers ({@code false} when the claim is no longer this run's).
 */
public interface ReactiveClaimHandle {

	/**
	 * Marks the record {@code COMPLETED}, as {@link ClaimHandle#complete}.
	 * @param response the serialized result, {@code null} for {@code void}
	 * @return {@code false} when the claim is no longer this run's
	 */
	Mono<Boolean> complete(@Nullable String response);

	/**
	 * Marks the record {@code FAILED}, as {@link ClaimHandle#fail}.
	 * @param failure what the operation threw
	 * @return {@code false} when the claim is no longer this run's
	 */
	Mono<Boolean> fail(Throwable failure);

	/**
	 * Gives the key up after a failure the next delivery may retry, as
	 * {@link ClaimHandle#release}.
	 * @param failure what the operation threw
	 * @return {@code false} when the claim is no longer this run's
	 */
	Mono<Boolean> release(Throwable failure);

	/**
	 * Gives the key up for an operation that never ran, as {@link ClaimHandle#abandon}. The
	 * default releases it.
	 * @return {@code false} when the claim is no longer this run's
	 */
	default Mono<Boolean> abandon() {
		return release(new java.util.concurrent.CancellationException("The operation never ran"));
	}

	/**
	 * Extends the lease, as {@link ClaimHandle#renew}.
	 * @return {@code false} when the claim is no longer this run's
	 */
	Mono<Boolean> renew();

	/**
	 * Stores a recovery point and renews the lease, as {@link ClaimHandle#saveRecoveryPoint}.
	 * @param recoveryPoint the application's marker
	 * @return {@code false} when the claim is no longer this run's
	 */
	Mono<Boolean> saveRecoveryPoint(String recoveryPoint);

	/**
	 * Whether this claim is part of the reactive transaction it was claimed in (found in the
	 * claim's Reactor context): its steps commit or roll back with it, as
	 * {@link ClaimHandle#joinsTransaction()}.
	 * @return {@code true} for a claim in the caller's transaction; the default is
	 * {@code false}
	 */
	default boolean joinsTransaction() {
		return false;
	}

}
