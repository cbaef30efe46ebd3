package io.github.idempotency.metrics;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;

/**
 * Turns what the engine does into the Micrometer meters named in {@link IdempotencyMeters}.
 * Meters are looked up once per workflow and cached, so a call costs a map read and an
 * increment.
 */
public final class MicrometerIdempotencyObserver implements IdempotencyObserver {

	private final MeterRegistry registry;

	private final String backend;

	private final Map<String, WorkflowMeters> workflows = new ConcurrentHashMap<>();

	private final Map<StoreOperation, Timer> ok = new EnumMap<>(StoreOperation.class);

	private final Map<StoreOperation, Timer> error = new EnumMap<>(StoreOperation.class);

	public MicrometerIdempotencyObserver(MeterRegistry registry, String backend) {
		this.registry = registry;
		this.backend = backend;
		for (StoreOperation operation : StoreOperation.values()) {
			this.ok.put(operation, storeTimer(operation, "ok"));
			this.error.put(operation, storeTimer(operation, "error"));
		}
	}

	@Override
	public void onRequest(String workflow, Outcome outcome) {
		Objects.requireNonNull(meters(workflow).requests.get(outcome)).increment();
	}

	@Override
	public void onConflict(String workflow) {
		meters(workflow).conflicts.increment();
	}

	@Override
	public void onTakeover(String workflow) {
		meters(workflow).takeovers.increment();
	}

	@Override
	public void onLeaseLost(String workflow) {
		meters(workflow).leaseLost.increment();
	}

	@Override
	public void onStoreCall(StoreOperation operation, long nanos, boolean success) {
		Objects.requireNonNull((success ? this.ok : this.error).get(operation)).record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void onCleanup(String backend, int removed, long nanos) {
		Timer.builder(IdempotencyMeters.CLEANUP)
			.description("Time taken by the runs of the store's cleanup of expired records, pauses included")
			.tag(IdempotencyMeters.TAG_BACKEND, backend)
			.register(this.registry)
			.record(nanos, TimeUnit.NANOSECONDS);
		Counter.builder(IdempotencyMeters.CLEANUP_REMOVED)
			.description("Expired records removed by the store's cleanup")
			.tag(IdempotencyMeters.TAG_BACKEND, backend)
			.register(this.registry)
			.increment(removed);
	}

	private WorkflowMeters meters(String workflow) {
		WorkflowMeters meters = this.workflows.get(workflow);
		return (meters != null) ? meters : this.workflows.computeIfAbsent(workflow, WorkflowMeters::new);
	}

	private Timer storeTimer(StoreOperation operation, String result) {
		return Timer.builder(IdempotencyMeters.STORE)
			.description("Time taken by the idempotency store's steps")
			.tag(IdempotencyMeters.TAG_BACKEND, this.backend)
			.tag(IdempotencyMeters.TAG_OPERATION, operation.tag())
			.tag(IdempotencyMeters.TAG_RESULT, result)
			.register(this.registry);
	}

	private final class WorkflowMeters {

		final Map<Outcome, Counter> requests = new EnumMap<>(Outcome.class);

		final Counter conflicts;

		final Counter takeovers;

		final Counter leaseLost;

		WorkflowMeters(String workflow) {
			for (Outcome outcome : Outcome.values()) {
				this.requests.put(outcome, counter(IdempotencyMeters.REQUESTS, "Idempotent calls by how they ended",
						workflow, outcome));
			}
			this.conflicts = counter(IdempotencyMeters.CONFLICTS, "Claims that found the key running elsewhere",
					workflow, null);
			this.takeovers = counter(IdempotencyMeters.TAKEOVERS, "Claims that took over an expired lease", workflow,
					null);
			this.leaseLost = counter(IdempotencyMeters.LEASE_LOST, "Runs whose claim was taken over by another run",
					workflow, null);
		}

		private Counter counter(String name, String description, String workflow, @Nullable Outcome outcome) {
			Counter.Builder builder = Counter.builder(name)
				.description(description)
				.tag(IdempotencyMeters.TAG_WORKFLOW, workflow)
				.tag(IdempotencyMeters.TAG_BACKEND, MicrometerIdempotencyObserver.this.backend);
			if (outcome != null) {
				builder.tag(IdempotencyMeters.TAG_OUTCOME, outcome.tag());
			}
			return builder.register(MicrometerIdempotencyObserver.this.registry);
		}

	}

}
