package io.github.idempotency.autoconfigure;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.kafka.IdempotencyKafkaErrorHandlerPostProcessor;
import io.github.idempotency.kafka.IdempotencyKafkaErrors;
import io.github.idempotency.kafka.KafkaBatchFailures;
import io.github.idempotency.kafka.KafkaHeaderKeyConverter;
import io.github.idempotency.kafka.KafkaListenerAcknowledgement;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * Kafka support. Kafka's {@code Header} becomes a key (by its value's bytes) through a
 * {@link KafkaHeaderKeyConverter}. With Spring Kafka, the starter's not-retryable
 * exceptions skip the retries of the {@link DefaultErrorHandler} and go to its recoverer
 * at once.
 * <p>
 * The application's {@code DefaultErrorHandler} bean (the usual place of a
 * {@code DeadLetterPublishingRecoverer}) is classified by a post-processor. Without any
 * {@link CommonErrorHandler} bean, a classified {@code DefaultErrorHandler} with Spring
 * Kafka's default back off and logging recoverer is defined, which Spring Boot hands to
 * its listener container factory. {@code @Idempotent(batch = ...)} listeners report the
 * failure of one record with {@code BatchListenerFailedException}
 * ({@link KafkaBatchFailures}). Listeners that acknowledge by hand have the records the
 * starter answers without running them acknowledged ({@link KafkaListenerAcknowledgement}),
 * and the starter's {@code DefaultErrorHandler} commits the records it recovers in every ack
 * mode.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass(name = { "org.apache.kafka.common.header.Header",
		"io.github.idempotency.kafka.KafkaHeaderKeyConverter" })
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public final class IdempotencyKafkaAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	KafkaHeaderKeyConverter idempotencyKafkaHeaderKeyConverter() {
		return new KafkaHeaderKeyConverter();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(DefaultErrorHandler.class)
	static class ErrorHandlerConfiguration {

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static IdempotencyKafkaErrorHandlerPostProcessor idempotencyKafkaErrorHandlerPostProcessor(
				ObjectProvider<IdempotencyProperties> properties) {
			return new IdempotencyKafkaErrorHandlerPostProcessor(
					() -> properties.getObject().getListenerBackOff().toBackOff());
		}

		@Bean
		@ConditionalOnMissingBean(BatchFailures.class)
		KafkaBatchFailures idempotencyKafkaBatchFailures() {
			return new KafkaBatchFailures();
		}

		@Bean
		@ConditionalOnMissingBean
		KafkaListenerAcknowledgement idempotencyKafkaListenerAcknowledgement(BeanFactory beanFactory) {
			return new KafkaListenerAcknowledgement(beanFactory);
		}

		@Bean
		@ConditionalOnMissingBean(CommonErrorHandler.class)
		DefaultErrorHandler idempotencyKafkaErrorHandler(IdempotencyProperties properties) {
			// the post-processor classifies it too; classify here so it stands on its own
			DefaultErrorHandler errorHandler = IdempotencyKafkaErrors.classify(new DefaultErrorHandler(),
					properties.getListenerBackOff().toBackOff());
			// MANUAL_IMMEDIATE commits only what the handler commits: a recovered record would come back
			errorHandler.setCommitRecovered(true);
			return errorHandler;
		}

	}

}
