package io.github.idempotency.kafka;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.kafka.listener.DefaultAfterRollbackProcessor;
import org.springframework.kafka.listener.FailedRecordProcessor;

/**
 * Registers the starter's not-retryable exceptions with every
 * {@link FailedRecordProcessor} bean: the application's {@code DefaultErrorHandler}
 * (which Spring Boot passes to its listener container factory) and
 * {@link DefaultAfterRollbackProcessor} beans.
 */
public class IdempotencyKafkaErrorHandlerPostProcessor implements BeanPostProcessor {

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof FailedRecordProcessor processor) {
			IdempotencyKafkaErrors.classify(processor);
		}
		return bean;
	}

}
