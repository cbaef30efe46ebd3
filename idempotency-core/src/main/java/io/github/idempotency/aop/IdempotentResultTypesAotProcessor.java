package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import org.springframework.aot.generate.GenerationContext;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.aot.BeanRegistrationCode;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Registers reflection hints for the result types of a bean's {@link Idempotent} methods,
 * which Jackson writes and reads back, so that replays work ahead of time and in a native
 * image.
 */
class IdempotentResultTypesAotProcessor implements BeanRegistrationAotProcessor {

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = ClassUtils.getUserClass(registeredBean.getBeanClass());
		if (!AnnotationUtils.isCandidateClass(beanClass, Idempotent.class)) {
			return null;
		}
		List<Type> types = new ArrayList<>();
		MethodIntrospector.selectMethods(beanClass,
				(MethodIntrospector.MetadataLookup<Idempotent>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, Idempotent.class))
			.keySet()
			.forEach((Method method) -> types.add(ResolvableType.forMethodReturnType(method, beanClass).getType()));
		if (types.isEmpty()) {
			return null;
		}
		return (GenerationContext context, BeanRegistrationCode code) -> this.bindings
			.registerReflectionHints(context.getRuntimeHints().reflection(), types.toArray(Type[]::new));
	}

}
