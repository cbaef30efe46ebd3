package io.github.idempotency.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.IdempotencyEngine;
import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.util.function.SingletonSupplier;

/**
 * The aspect: resolves the key and payload of an {@code @Idempotent} call and hands it to
 * the {@code IdempotencyEngine}. Nothing of the protocol lives here. Its collaborators are
 * looked up on the first call, so that creating the advisor (early, with the other
 * infrastructure) does not create the store.
 */
final class IdempotentInterceptor implements MethodInterceptor {

	private final Supplier<IdempotentMethodResolver> resolver;

	IdempotentInterceptor(Supplier<IdempotentMethodResolver> resolver) {
		this.resolver = SingletonSupplier.of(resolver);
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
		IdempotentMethodResolver resolver = this.resolver.get();
		IdempotentMethod method = resolver.resolve(invocation.getMethod(), targetClass);
		if (method == null) {
			return invocation.proceed();
		}
		if (method.isBatch()) {
			return BatchInvocation.invoke(resolver, method, invocation);
		}
		EvaluationContext context = resolver.evaluationContext(method, invocation.getArguments());
		IdempotencyEngine engine = resolver.engine();
		Object key = (method.key() != null) ? evaluate(engine, method, "key", method.key(), context) : null;
		Expression payloadExpression = method.payload();
		Object payload = (payloadExpression != null) ? evaluate(engine, method, "payload", payloadExpression, context)
				: null;
		if (method.adaptation() != null) {
			return method.adaptation().invoke(key, payload, new IdempotentMethodAdapter.Invocation() {

				@Override
				public @Nullable Object execute(@Nullable Object key, @Nullable Object payload,
						IdempotentMethodAdapter.Action action) throws Throwable {
					return engine.execute(method.operation(), key, payload, action::run);
				}

				@Override
				public CompletableFuture<@Nullable Object> executeAsync(@Nullable Object key, @Nullable Object payload,
						IdempotentMethodAdapter.Action action, Executor claims) {
					return engine.executeAsync(method.operation(), key, payload, action::run, claims);
				}

				@Override
				public CompletableFuture<@Nullable Object> executeAsync(@Nullable Object key, @Nullable Object payload,
						IdempotentMethodAdapter.Action action, Executor claims, Object context) {
					return engine.executeAsync(method.operation(), key, payload, action::run, claims, context);
				}

				@Override
				public boolean isNonBlocking() {
					return engine.isNonBlocking();
				}

				@Override
				public @Nullable Object[] arguments() {
					return invocation.getArguments();
				}

				@Override
				public @Nullable Object proceed() throws Throwable {
					return invocation.proceed();
				}

			});
		}
		return engine.execute(method.operation(), key, payload, invocation::proceed);
	}

	/**
	 * Evaluates a key or payload expression. One that fails on the arguments (a property
	 * the argument does not have, a method called on {@code null}) fails the same way on
	 * every delivery of the message: bad input, rejected as not retryable.
	 */
	private static @Nullable Object evaluate(IdempotencyEngine engine, IdempotentMethod method, String attribute,
			Expression expression, EvaluationContext context) {
		try {
			return expression.getValue(context);
		}
		catch (EvaluationException ex) {
			throw engine.rejectKey(method.operation(), "'" + attribute + "' = " + expression.getExpressionString()
					+ " cannot be evaluated on the arguments of " + method.method().getName() + " (" + ex.getMessage()
					+ ")", ex);
		}
	}

}
