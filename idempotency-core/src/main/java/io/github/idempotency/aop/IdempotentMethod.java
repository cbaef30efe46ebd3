package io.github.idempotency.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.IdempotentOperation;
import org.springframework.expression.Expression;

/**
 * What the aspect keeps per annotated method: its parsed expressions and prepared
 * operation.
 *
 * @param method the annotated method
 * @param operation the prepared operation
 * @param key the parsed key expression, or {@code null} when an adapter supplies the key
 * @param payload the parsed payload expression, or {@code null}
 * @param adaptation how an {@link IdempotentMethodAdapter} adapts the method, or
 * {@code null}
 * @param batchParameter the index of the batch parameter ({@code Idempotent#batch}), or -1
 */
record IdempotentMethod(Method method, IdempotentOperation operation, @Nullable Expression key,
		@Nullable Expression payload, IdempotentMethodAdapter.@Nullable Adaptation adaptation, int batchParameter) {

	/**
	 * Whether each element of a list parameter is an operation of its own.
	 * @return {@code true} for a batch method
	 */
	boolean isBatch() {
		return this.batchParameter >= 0;
	}

}
