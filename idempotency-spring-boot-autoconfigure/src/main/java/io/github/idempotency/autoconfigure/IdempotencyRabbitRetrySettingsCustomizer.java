package io.github.idempotency.autoconfigure;

import java.util.function.Predicate;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.amqp.IdempotencyFatalExceptionStrategy;
import org.springframework.boot.amqp.autoconfigure.RabbitListenerRetrySettingsCustomizer;
import org.springframework.boot.retry.RetryPolicySettings;

/**
 * Keeps Spring Boot's listener retry ({@code spring.rabbitmq.listener.*.retry.enabled})
 * from retrying the starter's not-retryable exceptions
 * ({@link IdempotencyException#isRetryable()} {@code false}): such a failure goes to the
 * recoverer at once (by default: rejected without requeue, to the dead-letter exchange).
 * An exception predicate the application already set still applies.
 */
final class IdempotencyRabbitRetrySettingsCustomizer implements RabbitListenerRetrySettingsCustomizer {

	@Override
	public void customize(RetryPolicySettings settings) {
		Predicate<Throwable> retryable = (failure) -> !IdempotencyFatalExceptionStrategy.isNotRetryable(failure);
		Predicate<Throwable> existing = settings.getExceptionPredicate();
		settings.setExceptionPredicate((existing != null) ? existing.and(retryable) : retryable);
	}

}
