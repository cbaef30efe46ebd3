package io.github.idempotency.amqp;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.observe.Outcome;
import org.springframework.amqp.listener.ConditionalRejectingErrorHandler;
import org.springframework.amqp.listener.FatalExceptionStrategy;
import org.springframework.amqp.listener.ListenerExecutionFailedException;
import org.springframework.amqp.listener.adapter.ReplyFailureException;

/**
 * A {@link FatalExceptionStrategy} that treats the starter's not-retryable exceptions
 * ({@link IdempotencyException#isRetryable()} {@code false}) as fatal, on top of Spring
 * AMQP's defaults (message conversion errors and the like). With a
 * {@link ConditionalRejectingErrorHandler}, a fatal failure is rejected without requeue:
 * to the queue's dead-letter exchange, or, on a queue without one, dropped by RabbitMQ.
 * Any other failure, such as {@code IdempotencyInProgressException}, is requeued.
 * <p>
 * A reply that has no destination is fatal too: the listener method returned a value, but
 * the message has no {@code reply-to} property and the listener names no {@code @SendTo}.
 * Requeued, it would fail the same way after every delivery (an {@code @Idempotent}
 * listener answering each one as a duplicate) for ever.
 * <p>
 * Its log line names what happened instead of Spring AMQP's "Fatal message conversion
 * error": the idempotency outcome ({@code invalid_key}, {@code mismatch}, {@code failed})
 * and the exception's message, which names the workflow.
 * <p>
 * The starter sets it on Spring Boot's auto-configured listener container factories. A
 * factory built elsewhere needs one line:
 * <pre class="code">
 * factory.setErrorHandler(IdempotencyFatalExceptionStrategy.errorHandler());
 * </pre>
 */
public class IdempotencyFatalExceptionStrategy extends ConditionalRejectingErrorHandler.DefaultExceptionStrategy {

	/**
	 * A {@link ConditionalRejectingErrorHandler} with this strategy. It does not log a
	 * failure that an {@link IdempotencyRabbitListenerBackOff} paused for (the back-off
	 * logs those, at most a line per interval); it logs every other one as Spring AMQP's
	 * does.
	 * @return a new error handler
	 */
	public static ConditionalRejectingErrorHandler errorHandler() {
		return new ConditionalRejectingErrorHandler(new IdempotencyFatalExceptionStrategy()) {

			@Override
			protected void log(Throwable throwable) {
				if (!IdempotencyRabbitListenerBackOff.pausedFor(throwable)) {
					super.log(throwable);
				}
			}

		};
	}

	@Override
	protected boolean isUserCauseFatal(@Nullable Throwable cause) {
		return cause != null && (isNotRetryable(cause) || isReplyWithoutDestination(cause));
	}

	@Override
	protected void logFatalException(ListenerExecutionFailedException exception, @Nullable Throwable cause) {
		IdempotencyException idempotency = (cause != null) ? notRetryable(cause) : null;
		if (idempotency != null) {
			this.logger.warn("Rejected without requeue: idempotency outcome " + outcome(idempotency) + ", "
					+ idempotency.getClass().getSimpleName() + ": " + idempotency.getMessage()
					+ ". It goes to the queue's dead-letter exchange; a queue without one drops it. "
					+ exception.getFailedMessage());
		}
		else if (cause != null && isReplyWithoutDestination(cause)) {
			this.logger.warn("Rejected without requeue: the listener method ran and returned a value, but its reply "
					+ "has no destination (the message has no reply-to property and the listener no @SendTo), which "
					+ "no redelivery can change; return void, or name a reply destination with @SendTo. It goes to "
					+ "the queue's dead-letter exchange; a queue without one drops it. " + exception.getFailedMessage());
		}
		else {
			super.logFatalException(exception, cause);
		}
	}

	/**
	 * Whether {@code failure}, or the first of its causes that is an
	 * {@link IdempotencyException}, is one the starter marks not retryable.
	 * @param failure what a listener threw, possibly wrapped
	 * @return {@code true} when retrying it cannot succeed
	 */
	public static boolean isNotRetryable(Throwable failure) {
		return notRetryable(failure) != null;
	}

	private static @Nullable IdempotencyException notRetryable(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof IdempotencyException ex) {
				return ex.isRetryable() ? null : ex;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return null;
	}

	/**
	 * A reply Spring AMQP could not address: no {@code reply-to} on the message, no
	 * {@code @SendTo}, no default (or a result it could not convert): the same on every
	 * delivery. A reply whose send failed has its address and may succeed later.
	 */
	private static boolean isReplyWithoutDestination(Throwable failure) {
		return failure instanceof ReplyFailureException reply && reply.getReplyTo() == null;
	}

	private static String outcome(IdempotencyException ex) {
		if (ex instanceof MissingIdempotencyKeyException || ex instanceof InvalidIdempotencyKeyException) {
			return Outcome.INVALID_KEY.tag();
		}
		if (ex instanceof IdempotencyKeyReusedException) {
			return Outcome.MISMATCH.tag();
		}
		if (ex instanceof IdempotentFailureReplayedException) {
			return Outcome.FAILED.tag();
		}
		return ex.getClass().getSimpleName();
	}

}
