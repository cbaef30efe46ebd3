package io.github.idempotency.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;

/**
 * Which methods are HTTP handler methods: {@code @RequestMapping} methods of a
 * {@code @Controller}, on Spring MVC and WebFlux alike. Their idempotency advice runs
 * outside their transaction: what the client receives, which is what is stored, is written
 * after it ends.
 */
final class HandlerMethods {

	private static final @Nullable Class<? extends Annotation> REQUEST_MAPPING = requestMapping();

	private HandlerMethods() {
	}

	static boolean isHandlerMethod(Method method, Class<?> targetClass) {
		return REQUEST_MAPPING != null && AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)
				&& AnnotatedElementUtils.hasAnnotation(method, REQUEST_MAPPING);
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
