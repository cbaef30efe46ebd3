package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each idempotent call is an {@code idempotency.execution} observation with its store
 * steps inside it; a replayed duplicate shows as such; the key is a key value only when
 * asked for.
 */
class ExecutionObservationTest {

	private static final Type FUTURE_OF_STRING = ResolvableType.forClassWithGenerics(CompletableFuture.class, String.class)
		.getType();

	private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

	private final ObservationRegistry registry = ObservationRegistry.create();

	private IdempotencyEngine engine;

	ExecutionObservationTest() {
		this.registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

			@Override
			public void onStop(Observation.Context context) {
				ExecutionObservationTest.this.stopped.add(context);
			}

		});
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aFirstDeliveryAndItsDuplicateAreObservedWithTheirStoreSteps() throws Throwable {
		this.engine = engine(false);
		IdempotentOperation operation = operation();
		assertThat(this.engine.execute(operation, "k1", null, () -> "receipt")).isEqualTo("receipt");
		assertThat(this.engine.execute(operation, "k1", null, () -> "again")).isEqualTo("receipt");
		List<Observation.Context> executions = named(ExecutionObservations.EXECUTION);
		assertThat(executions).hasSize(2);
		assertThat(lowValue(executions.get(0), "outcome")).isEqualTo("miss");
		assertThat(lowValue(executions.get(1), "outcome")).isEqualTo("hit");
		assertThat(lowValue(executions.get(0), "workflow")).isEqualTo("observed");
		assertThat(lowValue(executions.get(0), "backend")).isEqualTo("memory");
		assertThat(executions.get(0).getHighCardinalityKeyValue("idempotency.key")).isNull();
		List<Observation.Context> steps = named(ExecutionObservations.STORE_OPERATION);
		assertThat(steps).extracting((step) -> lowValue(step, "operation")).containsExactly("claim", "complete", "claim");
		assertThat(steps).allSatisfy((step) -> assertThat(step.getParentObservation()).isNotNull()
			.satisfies((parent) -> assertThat(parent.getContextView().getName())
				.isEqualTo(ExecutionObservations.EXECUTION)));
	}

	@Test
	void theKeyIsAHighCardinalityKeyValueOnlyWhenAskedFor() throws Throwable {
		this.engine = engine(true);
		this.engine.execute(operation(), "k1", null, () -> "receipt");
		assertThat(named(ExecutionObservations.EXECUTION).get(0).getHighCardinalityKeyValue("idempotency.key"))
			.isEqualTo(KeyValue.of("idempotency.key", "k1"));
	}

	@Test
	void anAsynchronousCallIsObservedUntilItsResultSettles() throws Throwable {
		this.engine = engine(false);
		IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("observed", FUTURE_OF_STRING)
			.fingerprinted(false)
			.leaseTtl(Duration.ofSeconds(30))
			.build());
		CompletableFuture<String> result = new CompletableFuture<>();
		Object answered = this.engine.execute(operation, "k1", null, () -> result);
		assertThat(named(ExecutionObservations.EXECUTION)).isEmpty();
		Thread settling = new Thread(() -> result.complete("receipt"));
		settling.start();
		settling.join();
		assertThat((CompletableFuture<?>) answered).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("receipt");
		assertThat(named(ExecutionObservations.EXECUTION)).singleElement()
			.satisfies((execution) -> assertThat(lowValue(execution, "outcome")).isEqualTo("miss"));
		List<Observation.Context> steps = named(ExecutionObservations.STORE_OPERATION);
		assertThat(steps).extracting((step) -> lowValue(step, "operation")).containsExactly("claim", "complete");
		assertThat(steps).allSatisfy((step) -> assertThat(step.getParentObservation()).isNotNull()
			.satisfies((parent) -> assertThat(parent.getContextView().getName())
				.isEqualTo(ExecutionObservations.EXECUTION)));
	}

	@Test
	void anAsynchronousFailureEndsItsObservationWithTheError() throws Throwable {
		this.engine = engine(false);
		IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("observed", FUTURE_OF_STRING)
			.fingerprinted(false)
			.leaseTtl(Duration.ofSeconds(30))
			.build());
		CompletableFuture<String> result = new CompletableFuture<>();
		this.engine.execute(operation, "k1", null, () -> result);
		IllegalStateException failure = new IllegalStateException("declined");
		result.completeExceptionally(failure);
		assertThat(named(ExecutionObservations.EXECUTION)).singleElement()
			.satisfies((execution) -> assertThat(execution.getError()).isSameAs(failure));
		assertThat(named(ExecutionObservations.STORE_OPERATION)).extracting((step) -> lowValue(step, "operation"))
			.containsExactly("claim", "release");
	}

	private IdempotencyEngine engine(boolean observeKeys) {
		return IdempotencyEngine.builder(new MemoryIdempotencyStore(), JsonMapper.builder().build())
			.observations(this.registry, observeKeys)
			.build();
	}

	private IdempotentOperation operation() {
		return this.engine.prepare(OperationDefinition.of("observed", String.class)
			.fingerprinted(false)
			.leaseTtl(Duration.ofSeconds(30))
			.build());
	}

	private List<Observation.Context> named(String name) {
		return this.stopped.stream().filter((context) -> name.equals(context.getName())).toList();
	}

	private static String lowValue(Observation.Context context, String key) {
		KeyValue value = context.getLowCardinalityKeyValue(key);
		return (value != null) ? value.getValue() : null;
	}

}
