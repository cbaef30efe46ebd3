package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aopalliance.aop.Advice;

import io.github.idempotency.Idempotent;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.StaticMethodMatcher;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.Ordered;

/**
 * Applies {@link IdempotentInterceptor} to methods annotated with {@link Idempotent}
 * (on the class or an interface it implements). Two advisors share the work: one for every
 * method but Spring MVC's handler methods and WebFlux's with a plain result, ordered by
 * {@code idempotency.aspect-order} (inside the method's transaction advice, so that a
 * claim joins the method's transaction), and one for those ({@link #forHandlerMethods}),
 * ordered first: their HTTP answer is written after the method's transaction ended, so
 * their claim is made before the transaction begins and settled once the response is
 * complete. A WebFlux handler method returning a {@code Mono} writes its answer in its run,
 * inside its transaction, and is the first advisor's.
 */
public final class IdempotentAdvisor extends AbstractPointcutAdvisor {

	private final Pointcut pointcut;

	private final IdempotentInterceptor interceptor;

	private final boolean handlerMethods;

	/**
	 * The advisor of every {@code @Idempotent} method but HTTP handler methods, whose
	 * interceptor looks the resolver up on its first call.
	 * @param resolver supplies the resolver of annotated methods
	 * @param order the advisor's order
	 */
	public IdempotentAdvisor(Supplier<IdempotentMethodResolver> resolver, int order) {
		this(resolver, order, false);
	}

	private IdempotentAdvisor(Supplier<IdempotentMethodResolver> resolver, int order, boolean handlerMethods) {
		this.interceptor = new IdempotentInterceptor(resolver);
		this.handlerMethods = handlerMethods;
		this.pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(null, Idempotent.class, true))
			.intersection(new StaticMethodMatcher() {

				@Override
				public boolean matches(Method method, Class<?> targetClass) {
					return HandlerMethods.isAnsweredAfterItsTransaction(method, targetClass) == handlerMethods;
				}

			});
		setOrder(order);
	}

	/**
	 * The advisor of {@code @Idempotent} HTTP handler methods ({@code @RequestMapping}
	 * methods of a {@code @Controller}) answered after their transaction ended (all but
	 * WebFlux's returning a {@code Mono}), ordered first.
	 * @param resolver supplies the resolver of annotated methods
	 * @return the advisor
	 */
	public static IdempotentAdvisor forHandlerMethods(Supplier<IdempotentMethodResolver> resolver) {
		return new IdempotentAdvisor(resolver, Ordered.HIGHEST_PRECEDENCE, true);
	}

	/** Whether this advisor is the one of HTTP handler methods, which runs outside their transaction. */
	boolean isForHandlerMethods() {
		return this.handlerMethods;
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
