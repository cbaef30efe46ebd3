package io.github.idempotency.autoconfigure;

import io.github.idempotency.amqp.IdempotencyFatalExceptionStrategy;
import io.github.idempotency.amqp.IdempotencyRabbitContainerCustomizer;
import io.github.idempotency.amqp.IdempotentRabbitListenerReplyCheck;
import io.github.idempotency.amqp.RabbitListenerAcknowledgement;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.amqp.autoconfigure.RabbitListenerRetrySettingsCustomizer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * Spring AMQP support: on the listener containers of Spring Boot's auto-configured
 * {@code rabbitListenerContainerFactory}, the starter's not-retryable exceptions are
 * rejected without requeue (to the dead-letter exchange) and
 * {@code IdempotencyInProgressException} is requeued.
 * <p>
 * Spring Boot applies a {@link ContainerCustomizer} only when it is the only one of its
 * type, so the customizers back off when the application defines its own; the
 * application's customizer or factory then sets
 * {@link IdempotencyFatalExceptionStrategy#errorHandler()} itself.
 * <p>
 * With Boot's listener retry enabled, the not-retryable exceptions skip the retries and go
 * to the recoverer at once.
 * <p>
 * An {@code @Idempotent @RabbitListener} method that returns a value but names no reply
 * destination ({@code @SendTo}) is logged as a warning when its bean is created.
 * <p>
 * Listeners that acknowledge by hand ({@code AcknowledgeMode.MANUAL}) have the messages the
 * starter answers without running them settled on their {@code Channel}
 * ({@link RabbitListenerAcknowledgement}).
 */
@AutoConfiguration(beforeName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
@ConditionalOnClass({ SimpleMessageListenerContainer.class, RabbitListenerAcknowledgement.class })
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public final class IdempotencyRabbitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(value = SimpleMessageListenerContainer.class,
			parameterizedContainer = ContainerCustomizer.class)
	IdempotencyRabbitContainerCustomizer<SimpleMessageListenerContainer> idempotencySimpleRabbitContainerCustomizer(
			IdempotencyProperties properties) {
		return new IdempotencyRabbitContainerCustomizer<>(properties.getListenerBackOff().toBackOff());
	}

	@Bean
	@ConditionalOnMissingBean(value = DirectMessageListenerContainer.class,
			parameterizedContainer = ContainerCustomizer.class)
	IdempotencyRabbitContainerCustomizer<DirectMessageListenerContainer> idempotencyDirectRabbitContainerCustomizer(
			IdempotencyProperties properties) {
		return new IdempotencyRabbitContainerCustomizer<>(properties.getListenerBackOff().toBackOff());
	}

	@Bean
	@ConditionalOnMissingBean
	RabbitListenerAcknowledgement idempotencyRabbitListenerAcknowledgement(BeanFactory beanFactory) {
		return new RabbitListenerAcknowledgement(beanFactory);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentRabbitListenerReplyCheck idempotentRabbitListenerReplyCheck() {
		return new IdempotentRabbitListenerReplyCheck();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RabbitListenerRetrySettingsCustomizer.class)
	static class RetryConfiguration {

		@Bean
		IdempotencyRabbitRetrySettingsCustomizer idempotencyRabbitRetrySettingsCustomizer() {
			return new IdempotencyRabbitRetrySettingsCustomizer();
		}

	}

}
