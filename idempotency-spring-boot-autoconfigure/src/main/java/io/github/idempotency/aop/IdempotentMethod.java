package io.github.idempotency.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.core.IdempotentOperation;
import org.springframework.expression.Expression;

/**
 * What the aspect keeps per annotated method: its parsed expressions and prepared
 * operation.
 *
 * @param method the annotated method
 * @param operation the prepared operation
 * @param key the parsed key expression
 * @param payload the parsed payload expression, or {@code null}
 * @param batchParameter the index of the batch parameter ({@code Idempotent#batch}), or -1
 */
record IdempotentMethod(Method method, IdempotentOperation operation, Expression key, @Nullable Expression payload,
		int batchParameter) {

	IdempotentMethod(Method method, IdempotentOperation operation, Expression key, @Nullable Expression payload) {
		this(method, operation, key, payload, -1);
	}

	/**
	 * Whether each element of a list parameter is an operation of its own.
	 * @return {@code true} for a batch method
	 */
	boolean isBatch() {
		return this.batchParameter >= 0;
	}

}
