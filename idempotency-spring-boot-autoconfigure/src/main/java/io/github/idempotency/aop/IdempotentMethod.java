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
 */
record IdempotentMethod(Method method, IdempotentOperation operation, Expression key, @Nullable Expression payload) {

}
