package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;

/**
 * A shape a call of an idempotent operation takes, for behaviour that must hold in each of
 * them: one case of the protocol, run through every shape ({@link ThroughShapes}). The Java
 * shapes are {@link JavaShape}'s; the Kotlin tests add a {@code suspend fun}'s.
 */
public interface Shape {

	/**
	 * Runs {@code body} as this shape's caller would.
	 * @return what the caller gets
	 */
	@Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
			@Nullable Object payload, Supplier<@Nullable Object> body) throws Throwable;

	default @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
			Supplier<@Nullable Object> body) throws Throwable {
		return call(engine, operation, key, key, body);
	}

	/** The declared result type of an operation of this shape whose value is {@code valueType}. */
	default Type resultType(Type valueType) {
		return valueType;
	}

	/**
	 * Whether a refusal (a replayed failure, a key reused) is answered by skipping the call
	 * with {@code null} rather than thrown: a batch without a way to fail at one element.
	 */
	default boolean skipsRefusals() {
		return false;
	}

	/** Whether the body sees its run's {@code IdempotencyContext}. */
	default boolean bindsContext() {
		return true;
	}

	/** An operation of this shape, fingerprinted, that records {@code recordFailureFor}. */
	default IdempotentOperation prepare(IdempotencyEngine engine, String workflow, Type valueType,
			List<Class<? extends Throwable>> recordFailureFor) {
		return prepare(engine, workflow, valueType, InProgressPolicy.REJECT, recordFailureFor);
	}

	default IdempotentOperation prepare(IdempotencyEngine engine, String workflow, Type valueType,
			InProgressPolicy onInProgress, List<Class<? extends Throwable>> recordFailureFor) {
		return engine.prepare(OperationDefinition.of(workflow, resultType(valueType))
			.leaseTtl(Duration.ofSeconds(30))
			.onInProgress(onInProgress)
			.recordFailureFor(recordFailureFor)
			.build());
	}

}
