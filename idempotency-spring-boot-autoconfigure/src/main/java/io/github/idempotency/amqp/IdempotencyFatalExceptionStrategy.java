package io.github.idempotency.amqp;

import io.github.idempotency.IdempotencyException;
import org.springframework.amqp.listener.ConditionalRejectingErrorHandler;
import org.springframework.amqp.listener.FatalExceptionStrategy;

/**
 * A {@link FatalExceptionStrategy} that treats the starter's not-retryable exceptions
 * ({@link IdempotencyException#isRetryable()} {@code false}) as fatal, on top of Spring
 * AMQP's defaults (message conversion errors and the like). With a
 * {@link ConditionalRejectingErrorHandler}, a fatal failure is rejected without requeue
 * (to the queue's dead-letter exchange, if any); any other failure, such as
 * {@code IdempotencyInProgressException}, is requeued.
 * <p>
 * The starter sets it on Spring Boot's auto-configured listener container factories. A
 * factory built elsewhere needs one line:
 * <pre class="code">
 * factory.setErrorHandler(IdempotencyFatalExceptionStrategy.errorHandler());
 * </pre>
 */
public class IdempotencyFatalExceptionStrategy extends ConditionalRejectingErrorHandler.DefaultExceptionStrategy {

	/**
	 * A {@link ConditionalRejectingErrorHandler} with this strategy.
	 * @return a new error handler
	 */
	public static ConditionalRejectingErrorHandler errorHandler() {
		return new ConditionalRejectingErrorHandler(new IdempotencyFatalExceptionStrategy());
	}

	@Override
	protected boolean isUserCauseFatal(Throwable cause) {
		return isNotRetryable(cause);
	}

	/**
	 * Whether {@code failure}, or the first of its causes that is an
	 * {@link IdempotencyException}, is one the starter marks not retryable.
	 * @param failure what a listener threw, possibly wrapped
	 * @return {@code true} when retrying it cannot succeed
	 */
	static boolean isNotRetryable(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof IdempotencyException ex) {
				return !ex.isRetryable();
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return false;
	}

}
