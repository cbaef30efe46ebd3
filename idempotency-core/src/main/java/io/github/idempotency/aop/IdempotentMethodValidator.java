package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Objects;

import io.github.idempotency.Idempotent;
import io.github.idempotency.internal.InvalidIdempotentMethodException;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Resolves every {@link Idempotent} method of a bean when the bean is created, so a
 * malformed expression, one that cannot work on the parameters' declared types, an
 * unusable result type or an idempotency advice placed outside the method's transaction
 * advice fails the application's start, naming the method, instead of the first call: a
 * {@link BeanCreationException} caused by an {@link InvalidIdempotentMethodException}.
 */
public final class IdempotentMethodValidator implements BeanPostProcessor {

	private final ObjectProvider<IdempotentMethodResolver> resolver;

	public IdempotentMethodValidator(ObjectProvider<IdempotentMethodResolver> resolver) {
		this.resolver = resolver;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (!AnnotationUtils.isCandidateClass(targetClass, Idempotent.class)) {
			return bean;
		}
		Map<Method, Idempotent> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<Idempotent>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, Idempotent.class));
		for (Method method : methods.keySet()) {
			try {
				this.resolver.getObject().resolve(method, targetClass);
			}
			catch (IllegalStateException ex) {
				throw new BeanCreationException(beanName, String.valueOf(ex.getMessage()), ex);
			}
			MethodProblem problem = TransactionAdvisorOrder.problem(bean, method, targetClass);
			if (problem != null) {
				InvalidIdempotentMethodException invalid = new InvalidIdempotentMethodException(
						ClassUtils.getUserClass(targetClass).getName() + "." + method.getName(), problem.problem(),
						problem.fix(), null);
				throw new BeanCreationException(beanName, Objects.requireNonNull(invalid.getMessage()), invalid);
			}
		}
		return bean;
	}

}
