package io.github.idempotency.aop;

import java.util.function.Supplier;

import org.aopalliance.aop.Advice;

import io.github.idempotency.Idempotent;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;

/**
 * Applies {@link IdempotentInterceptor} to methods annotated with {@link Idempotent}
 * (on the class or an interface it implements). Its order is
 * {@code idempotency.aspect-order}.
 */
public final class IdempotentAdvisor extends AbstractPointcutAdvisor {

	private final Pointcut pointcut = new AnnotationMatchingPointcut(null, Idempotent.class, true);

	private final IdempotentInterceptor interceptor;

	/**
	 * An advisor whose interceptor looks the resolver up on its first call.
	 * @param resolver supplies the resolver of annotated methods
	 * @param order the advisor's order
	 */
	public IdempotentAdvisor(Supplier<IdempotentMethodResolver> resolver, int order) {
		this.interceptor = new IdempotentInterceptor(resolver);
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

}
