package io.github.idempotency.observe;

/**
 * Receives what the engine does, for metrics. Every method has an empty default; the
 * engine calls them on the calling thread, so implementations must be fast. What one
 * throws is logged and ignored: an observer never changes the protocol's outcome.
 */
public interface IdempotencyObserver {

	/** An observer that ignores everything. */
	IdempotencyObserver NONE = new IdempotencyObserver() {
	};

	/**
	 * A call ended; called exactly once per call.
	 * @param workflow the workflow
	 * @param outcome how it ended
	 */
	default void onRequest(String workflow, Outcome outcome) {
	}

	/**
	 * A claim found the key running elsewhere (once per call, whatever happened next).
	 * @param workflow the workflow
	 */
	default void onConflict(String workflow) {
	}

	/**
	 * A claim took over the expired lease of another run.
	 * @param workflow the workflow
	 */
	default void onTakeover(String workflow) {
	}

	/**
	 * A run found its claim taken over; its result was not stored.
	 * @param workflow the workflow
	 */
	default void onLeaseLost(String workflow) {
	}

	/**
	 * A store step finished.
	 * @param operation the step
	 * @param nanos how long it took
	 * @param success {@code false} when it threw
	 */
	default void onStoreCall(StoreOperation operation, long nanos, boolean success) {
	}

	/**
	 * A store's scheduled cleanup run ended (called on the cleanup's thread, once per run
	 * that did not throw).
	 * @param backend the store's backend name
	 * @param removed how many expired records it removed
	 * @param nanos how long it took, pauses included
	 */
	default void onCleanup(String backend, int removed, long nanos) {
	}

}
