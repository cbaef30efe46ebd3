package io.github.idempotency.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;

/**
 * Which methods are HTTP handler methods: {@code @RequestMapping} methods of a
 * {@code @Controller}, on Spring MVC and WebFlux alike, and which of them are answered after
 * their transaction ended. Spring MVC writes what the client receives, which is what is
 * stored, once the method returned, after its transaction: the idempotency advice of such a
 * method runs outside the transaction's. A WebFlux handler method returning a {@code Mono}
 * (a Kotlin {@code suspend fun} included) has its answer written by the run itself
 * (into the response that keeps it until it is sent): its advice runs inside the
 * transaction's, as any other method's, so that the record commits or rolls back with the
 * method's writes.
 */
final class HandlerMethods {

	private static final @Nullable Class<? extends Annotation> REQUEST_MAPPING = requestMapping();

	private HandlerMethods() {
	}

	private static boolean isHandlerMethod(Method method, Class<?> targetClass) {
		return REQUEST_MAPPING != null && AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)
				&& AnnotatedElementUtils.hasAnnotation(method, REQUEST_MAPPING);
	}

	/**
	 * Whether the method is a handler method whose answer is written after its transaction
	 * ended, so that its idempotency advice runs outside it.
	 * @param method the method
	 * @param targetClass the bean's class
	 * @return {@code false} for any other method, and for a handler method returning a
	 * {@code Mono} or suspending
	 */
	static boolean isAnsweredAfterItsTransaction(Method method, Class<?> targetClass) {
		return isHandlerMethod(method, targetClass) && !isAnsweredByItsRun(method);
	}

	private static boolean isAnsweredByItsRun(Method method) {
		return method.getReturnType().getName().equals("reactor.core.publisher.Mono")
				|| KotlinDetector.isSuspendingFunction(method);
	}

	@SuppressWarnings("unchecked")
	private static @Nullable Class<? extends Annotation> requestMapping() {
		String name = "org.springframework.web.bind.annotation.RequestMapping";
		ClassLoader loader = HandlerMethods.class.getClassLoader();
		if (!ClassUtils.isPresent(name, loader)) {
			return null;
		}
		return (Class<? extends Annotation>) ClassUtils.resolveClassName(name, loader);
	}

}
