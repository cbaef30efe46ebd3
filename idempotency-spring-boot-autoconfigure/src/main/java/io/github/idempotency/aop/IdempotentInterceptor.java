package io.github.idempotency.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.core.IdempotencyEngine.Action;
import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationContext;
import org.springframework.util.function.SingletonSupplier;

/**
 * The aspect: resolves the key and payload of an {@code @Idempotent} call and hands it to
 * the {@code IdempotencyEngine}. Nothing of the protocol lives here. Its collaborators are
 * looked up on the first call, so that creating the advisor (early, with the other
 * infrastructure) does not create the store.
 */
public class IdempotentInterceptor implements MethodInterceptor {

	private final Supplier<IdempotentMethodResolver> resolver;

	public IdempotentInterceptor(Supplier<IdempotentMethodResolver> resolver) {
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
		Object key = (method.key() != null) ? method.key().getValue(context) : null;
		Object payload = (method.payload() != null) ? method.payload().getValue(context) : null;
		if (method.adaptation() != null) {
			return method.adaptation().invoke(key, payload, new IdempotentMethodAdapter.Invocation() {

				@Override
				public @Nullable Object execute(@Nullable Object key, @Nullable Object payload, Action action)
						throws Throwable {
					return resolver.engine().execute(method.operation(), key, payload, action);
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
		return resolver.engine().execute(method.operation(), key, payload, invocation::proceed);
	}

}
