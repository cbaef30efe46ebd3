package io.github.idempotency.amqp;

import org.aopalliance.aop.Advice;

import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.util.backoff.BackOff;

/**
 * Sets {@link IdempotencyFatalExceptionStrategy#errorHandler()} on each container that
 * Spring Boot's auto-configured listener container factory creates, and puts an
 * {@link IdempotencyRabbitListenerBackOff} first in its advice chain, so that a delivery
 * whose claim failed for the store (or a key in progress) is requeued after a pause that
 * grows while claims keep failing.
 *
 * @param <C> the container type
 */
public class IdempotencyRabbitContainerCustomizer<C extends AbstractMessageListenerContainer>
		implements ContainerCustomizer<C> {

	private final BackOff backOff;

	/**
	 * A customizer with the default back-off ({@link IdempotencyRabbitListenerBackOff#defaultBackOff()}).
	 */
	public IdempotencyRabbitContainerCustomizer() {
		this(IdempotencyRabbitListenerBackOff.defaultBackOff());
	}

	/**
	 * @param backOff the pause of a consumer before each requeue of a delivery whose claim
	 * failed for the store
	 */
	public IdempotencyRabbitContainerCustomizer(BackOff backOff) {
		this.backOff = backOff;
	}

	@Override
	public void configure(C container) {
		container.setErrorHandler(IdempotencyFatalExceptionStrategy.errorHandler());
		container.setAdviceChain(withBackOff(container, this.backOff));
	}

	/**
	 * The container's advice chain with an {@link IdempotencyRabbitListenerBackOff} first,
	 * outside listener retry's interceptor (which sees each failure before it).
	 * @param container the container
	 * @param backOff the pause before each requeue of a delivery whose claim failed for the store
	 * @return the advice chain to set on it
	 */
	public static Advice[] withBackOff(AbstractMessageListenerContainer container, BackOff backOff) {
		// the container's chain so far (the factory's: listener retry's interceptor), which it
		// only shows to its subclasses
		Object current = new DirectFieldAccessor(container).getPropertyValue("adviceChain");
		Advice[] existing = (current instanceof Advice[] advices) ? advices : new Advice[0];
		Advice[] chain = new Advice[existing.length + 1];
		chain[0] = new IdempotencyRabbitListenerBackOff(backOff, container);
		System.arraycopy(existing, 0, chain, 1, existing.length);
		return chain;
	}

}
