package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;

/**
 * What is fixed for every call of one idempotent method (or template request shape):
 * everything but the key and the payload. {@code null} and {@code DEFAULT} values fall back
 * to the engine's settings.
 *
 * @param workflow the scope of the keys
 * @param resultType the declared (generic) result type; {@code void.class} stores nothing
 * @param fingerprinted whether a payload is fingerprinted
 * @param leaseTtl the lease, or {@code null}
 * @param retention the retention, or {@code null}
 * @param onInProgress what to do on a conflict
 * @param recordFailureFor the permanent failure types
 */
public record OperationDefinition(String workflow, Type resultType, boolean fingerprinted,
		@Nullable Duration leaseTtl, @Nullable Duration retention, InProgressPolicy onInProgress,
		List<Class<? extends Throwable>> recordFailureFor) {

	public OperationDefinition {
		recordFailureFor = List.copyOf(recordFailureFor);
	}

}
