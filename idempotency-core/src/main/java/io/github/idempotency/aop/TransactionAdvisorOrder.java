package io.github.idempotency.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.Advisor;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.aop.framework.Advised;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.util.ClassUtils;

/**
 * Checks that a {@code @Transactional @Idempotent} method's idempotency advice runs inside
 * its transaction advice, so that the claim joins the very transaction the method's
 * writes use, whatever its propagation (the one demarcation is Spring's own).
 */
final class TransactionAdvisorOrder {

	private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.interceptor.TransactionAspectSupport",
			TransactionAdvisorOrder.class.getClassLoader());

	private TransactionAdvisorOrder() {
	}

	/**
	 * Why the idempotency advice of {@code method} runs outside its transaction advice.
	 * @param bean the bean, a proxy when it is advised
	 * @param method the {@code @Idempotent} method
	 * @param targetClass the bean's class
	 * @return the reason and how to correct it, or {@code null} when the order is right
	 */
	static @Nullable MethodProblem problem(Object bean, Method method, Class<?> targetClass) {
		if (!TRANSACTIONS_PRESENT || !(bean instanceof Advised advised)) {
			return null;
		}
		Advisor[] advisors = advised.getAdvisors();
		for (int i = 0; i < advisors.length; i++) {
			if (advisors[i] instanceof IdempotentAdvisor idempotent && !idempotent.isForHandlerMethods()) {
				for (int j = i + 1; j < advisors.length; j++) {
					if (isTransactionAdvice(advisors[j], method, targetClass)) {
						return new MethodProblem("its idempotency advice (order " + idempotent.getOrder()
								+ ") runs outside its transaction advice (order " + order(advisors[j])
								+ "), so the claim would not be part of the method's transaction", "give "
								+ "idempotency.aspect-order a lower precedence (a higher number) than the "
								+ "transaction advisor's, or the transaction advisor a higher precedence "
								+ "(@EnableTransactionManagement(order = ...))");
					}
				}
			}
		}
		return null;
	}

	private static boolean isTransactionAdvice(Advisor advisor, Method method, Class<?> targetClass) {
		return advisor instanceof PointcutAdvisor pointcutAdvisor
				&& pointcutAdvisor.getAdvice() instanceof TransactionAspectSupport
				&& pointcutAdvisor.getPointcut().getClassFilter().matches(targetClass)
				&& pointcutAdvisor.getPointcut().getMethodMatcher().matches(method, targetClass);
	}

	private static String order(Advisor advisor) {
		return (advisor instanceof org.springframework.core.Ordered ordered) ? String.valueOf(ordered.getOrder())
				: "unordered";
	}

}
