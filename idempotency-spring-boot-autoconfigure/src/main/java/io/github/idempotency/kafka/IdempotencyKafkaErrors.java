package io.github.idempotency.kafka;

import java.util.List;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.FailedRecordProcessor;

/**
 * Classifies the starter's exceptions for Spring Kafka's error handling: those that are
 * not {@link IdempotencyException#isRetryable() retryable} go to the recoverer (typically
 * a {@code DeadLetterPublishingRecoverer}) at once; {@code IdempotencyInProgressException}
 * is retried with the handler's back off.
 * <p>
 * {@code DefaultErrorHandler} beans are classified by the starter. A handler built
 * elsewhere needs one line:
 * <pre class="code">
 * IdempotencyKafkaErrors.classify(errorHandler);
 * </pre>
 */
public final class IdempotencyKafkaErrors {

	private static final List<Class<? extends Exception>> NOT_RETRYABLE = List.of(
			IdempotencyKeyReusedException.class, IdempotentFailureReplayedException.class,
			MissingIdempotencyKeyException.class, InvalidIdempotencyKeyException.class);

	private IdempotencyKafkaErrors() {
	}

	/**
	 * The starter's exceptions that a new delivery cannot fix.
	 * @return the not-retryable exception types
	 */
	public static List<Class<? extends Exception>> notRetryable() {
		return NOT_RETRYABLE;
	}

	/**
	 * Registers {@link #notRetryable()} with an error handler or after-rollback processor,
	 * such as a {@link DefaultErrorHandler}.
	 * @param <T> the processor's type
	 * @param processor the processor to classify
	 * @return the same processor
	 */
	@SuppressWarnings("unchecked")
	public static <T extends FailedRecordProcessor> T classify(T processor) {
		processor.addNotRetryableExceptions(NOT_RETRYABLE.toArray(Class[]::new));
		return processor;
	}

}
