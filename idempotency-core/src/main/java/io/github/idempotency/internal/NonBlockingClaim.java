package io.github.idempotency.internal;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;

/**
 * A claim of a non-blocking store ({@link NonBlockingStore}): its steps as the blocking
 * {@link ClaimHandle} (for the lease renewer and a run's recovery points, on threads that may
 * block), and as answers that arrive without a thread held, which {@link Settlement} uses to
 * settle an asynchronous run. Free of Reactor, so that the engine loads without it.
 */
interface NonBlockingClaim extends ClaimHandle {

	/**
	 * Stores an ending on this claim.
	 * @param ending how the run ended
	 * @return whether it was stored ({@code false} when the claim is no longer this run's)
	 */
	CompletableFuture<Boolean> store(Ending ending);

	/**
	 * Reads a record, in the claim's context.
	 * @param id the record
	 * @return the record, or empty
	 */
	CompletableFuture<Optional<IdempotencyRecord>> find(RecordId id);

}
