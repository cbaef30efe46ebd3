package io.github.idempotency.amqp;

import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;

/**
 * Sets {@link IdempotencyFatalExceptionStrategy#errorHandler()} on each container that
 * Spring Boot's auto-configured listener container factory creates.
 *
 * @param <C> the container type
 */
public class IdempotencyRabbitContainerCustomizer<C extends AbstractMessageListenerContainer>
		implements ContainerCustomizer<C> {

	@Override
	public void configure(C container) {
		container.setErrorHandler(IdempotencyFatalExceptionStrategy.errorHandler());
	}

}
