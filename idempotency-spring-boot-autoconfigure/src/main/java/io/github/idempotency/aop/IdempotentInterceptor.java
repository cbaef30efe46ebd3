package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.core.IdempotencyEngine;
import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationContext;
import org.springframework.util.function.SingletonSupplier;

/**
 * The aspect: resolves the key and payload of an {@code @Idempotent} call and hands it to
 * the {@link IdempotencyEngine}. Nothing of the protocol lives here. Its collaborators are
 * looked up on the first call, so that creating the advisor (early, with the other
 * infrastructure) does not create the store.
 */
public class IdempotentInterceptor implements MethodInterceptor {

	private final Supplier<IdempotentMethodResolver> resolver;

	private final Supplier<InvocationWrapper> wrapper;

	public IdempotentInterceptor(Supplier<IdempotentMethodResolver> resolver, Supplier<InvocationWrapper> wrapper) {
		this.resolver = SingletonSupplier.of(resolver);
		this.wrapper = SingletonSupplier.of(wrapper);
	}

	public IdempotentInterceptor(IdempotentMethodResolver resolver) {
		this(() -> resolver, () -> InvocationWrapper.NONE);
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
		EvaluationContext context = resolver.evaluationContext(method, invocation.getArguments());
		Object key = method.key().getValue(context);
		Object payload = (method.payload() != null) ? method.payload().getValue(context) : null;
		IdempotencyEngine engine = resolver.engine();
		return this.wrapper.get()
			.invoke(invocation.getMethod(), targetClass,
					() -> engine.execute(method.operation(), key, payload, invocation::proceed));
	}

	/**
	 * Wraps the engine's call, for example in the transaction the method declares, so
	 * that the claim joins it whatever the order of the advisors.
	 */
	@FunctionalInterface
	public interface InvocationWrapper {

		/** Calls the engine directly. */
		InvocationWrapper NONE = (method, targetClass, call) -> call.proceed();

		@Nullable Object invoke(Method method, Class<?> targetClass, IdempotencyEngine.Action call) throws Throwable;

	}

}
