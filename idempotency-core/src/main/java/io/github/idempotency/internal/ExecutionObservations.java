package io.github.idempotency.internal;

import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.RecordId;

/**
 * The engine's Micrometer observations: each call is an {@value #EXECUTION} observation
 * (low-cardinality {@code workflow}, {@code backend}, {@code outcome}; the key only as a
 * high-cardinality {@code idempotency.key} when asked for), and each store step an
 * {@value #STORE_OPERATION} observation inside it ({@code operation}, {@code backend}), so a
 * trace shows the claim, any waiting claims, the method and the completion. The observation
 * of a call with an asynchronous result ends when that result settles. With a no-op
 * registry nothing is created.
 */
final class ExecutionObservations {

	/** The name of the observation of one idempotent call. */
	static final String EXECUTION = "idempotency.execution";

	/** The name of the observation of one store step. */
	static final String STORE_OPERATION = "idempotency.store.operation";

	private static final Object HANDED_OVER = ExecutionObservations.class.getName() + ".handedOver";

	private final ObservationRegistry registry;

	private final String backend;

	private final boolean includeKey;

	ExecutionObservations(ObservationRegistry registry, String backend, boolean includeKey) {
		this.registry = registry;
		this.backend = backend;
		this.includeKey = includeKey;
	}

	boolean isNoop() {
		return this.registry.isNoop();
	}

	/**
	 * Starts the observation of a call.
	 */
	Observation execution(RecordId id) {
		Observation observation = Observation.createNotStarted(EXECUTION, this.registry)
			.contextualName("idempotency " + id.workflow())
			.lowCardinalityKeyValue("workflow", id.workflow())
			.lowCardinalityKeyValue("backend", this.backend);
		if (this.includeKey) {
			observation.highCardinalityKeyValue("idempotency.key", id.key());
		}
		return observation.start();
	}

	/**
	 * Records how the current call ended on its observation.
	 */
	void outcome(Outcome outcome) {
		if (this.registry.isNoop()) {
			return;
		}
		Observation current = this.registry.getCurrentObservation();
		if (current != null && EXECUTION.equals(current.getContext().getName())) {
			current.lowCardinalityKeyValue("outcome", outcome.tag());
		}
	}

	/**
	 * Takes the current call's observation over from the thread that started it: the call
	 * goes on after the method returned (an asynchronous result), and whoever settles it
	 * stops the observation.
	 * @return the observation, or {@code null} when there is none
	 */
	@Nullable Observation handOver() {
		if (this.registry.isNoop()) {
			return null;
		}
		Observation current = this.registry.getCurrentObservation();
		if (current == null || !EXECUTION.equals(current.getContext().getName())) {
			return null;
		}
		current.getContext().put(HANDED_OVER, Boolean.TRUE);
		return current;
	}

	/**
	 * Stops the observation of a call unless it was {@linkplain #handOver() handed over}.
	 */
	static void stopUnlessHandedOver(Observation execution) {
		if (!execution.getContext().containsKey(HANDED_OVER)) {
			execution.stop();
		}
	}

	/**
	 * Starts the observation of a store step, inside the current call's.
	 */
	Observation step(StoreOperation operation) {
		if (this.registry.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(STORE_OPERATION, this.registry)
			.contextualName("idempotency " + operation.tag())
			.lowCardinalityKeyValue("operation", operation.tag())
			.lowCardinalityKeyValue("backend", this.backend)
			.start();
	}

}
