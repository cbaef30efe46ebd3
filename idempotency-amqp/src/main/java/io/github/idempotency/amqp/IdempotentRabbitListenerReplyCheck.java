package io.github.idempotency.amqp;

import java.lang.reflect.Method;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.idempotency.Idempotent;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.util.ClassUtils;

/**
 * Warns, when a bean is created, about each {@code @Idempotent} {@code @RabbitListener}
 * method (or {@code @RabbitHandler} method of a {@code @RabbitListener} class) that
 * returns a value but names no reply destination ({@code @SendTo} on the method, or, for
 * a handler, on its class). Spring AMQP sends a returned value as a reply; for a message without a
 * {@code reply-to} property it has nowhere to send it, so the delivery fails after the
 * method ran. Requeued, every redelivery would be a duplicate whose reply fails again;
 * the starter's {@link IdempotencyFatalExceptionStrategy} rejects it instead (to the
 * dead-letter exchange). Either way the method's result reaches no one.
 */
public class IdempotentRabbitListenerReplyCheck implements BeanPostProcessor {

	private static final Log logger = LogFactory.getLog(IdempotentRabbitListenerReplyCheck.class);

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (!AnnotationUtils.isCandidateClass(targetClass, Idempotent.class)) {
			return bean;
		}
		Map<Method, Idempotent> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<Idempotent>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, Idempotent.class));
		for (Method method : methods.keySet()) {
			boolean listener = isListener(method);
			boolean handler = isHandler(method, targetClass);
			if ((listener || handler) && returnsValue(method) && !hasReplyDestination(method, targetClass, handler)) {
				logger.warn("@Idempotent @RabbitListener " + ClassUtils.getUserClass(targetClass).getName() + "."
						+ method.getName() + " returns " + new MethodParameter(method, -1).getParameterType().getSimpleName()
						+ " but names no reply destination: Spring AMQP sends the returned value as a reply, and for a "
						+ "message without a reply-to property that fails after the method ran (the starter's error "
						+ "handler rejects it to the dead-letter exchange; another error handler requeues it, and every "
						+ "redelivery is a duplicate whose reply fails again). Return void, or name a reply "
						+ "destination with @SendTo");
			}
		}
		return bean;
	}

	private static boolean isListener(Method method) {
		return !AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RabbitListener.class).isEmpty();
	}

	private static boolean isHandler(Method method, Class<?> targetClass) {
		return AnnotatedElementUtils.hasAnnotation(method, RabbitHandler.class)
				&& !AnnotatedElementUtils.findMergedRepeatableAnnotations(targetClass, RabbitListener.class).isEmpty();
	}

	private static boolean returnsValue(Method method) {
		// the Kotlin return type of a suspend fun (void for Unit), as Spring reads it
		Class<?> type = new MethodParameter(method, -1).getParameterType();
		return type != void.class && type != Void.class;
	}

	/**
	 * Where Spring AMQP looks for {@code @SendTo}: on a listener method; on a handler
	 * method or, as the default of its handlers, on a {@code @RabbitListener} class.
	 */
	private static boolean hasReplyDestination(Method method, Class<?> targetClass, boolean handler) {
		return AnnotationUtils.getAnnotation(method, SendTo.class) != null
				|| (handler && AnnotationUtils.getAnnotation(targetClass, SendTo.class) != null);
	}

}
