package io.github.idempotency.kafka;

import java.util.function.Supplier;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.kafka.listener.DefaultAfterRollbackProcessor;
import org.springframework.kafka.listener.FailedRecordProcessor;
import org.springframework.util.backoff.BackOff;

/**
 * Registers the starter's not-retryable exceptions, and the back-off of the records whose
 * claims failed for the store or a key in progress, with every
 * {@link FailedRecordProcessor} bean: the application's {@code DefaultErrorHandler}
 * (which Spring Boot passes to its listener container factory) and
 * {@link DefaultAfterRollbackProcessor} beans.
 */
public class IdempotencyKafkaErrorHandlerPostProcessor implements BeanPostProcessor {

	private final Supplier<BackOff> backOff;

	/**
	 * A post-processor with the default back-off ({@link IdempotencyKafkaErrors#defaultBackOff()}).
	 */
	public IdempotencyKafkaErrorHandlerPostProcessor() {
		this(IdempotencyKafkaErrors::defaultBackOff);
	}

	/**
	 * @param backOff the back-off of the records whose claims failed for the store or a key
	 * in progress, asked for when the first processor is classified
	 */
	public IdempotencyKafkaErrorHandlerPostProcessor(Supplier<BackOff> backOff) {
		this.backOff = backOff;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof FailedRecordProcessor processor) {
			IdempotencyKafkaErrors.classify(processor, this.backOff.get());
		}
		return bean;
	}

}
