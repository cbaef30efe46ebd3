package io.github.idempotency.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.internal.HeldBackDeliveries;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.FailedRecordProcessor;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Classifies the starter's exceptions for Spring Kafka's error handling: those that are
 * not {@link IdempotencyException#isRetryable() retryable} go to the recoverer (typically
 * a {@code DeadLetterPublishingRecoverer}) at once; a record whose claim failed because the
 * store could not be reached ({@code IdempotencyStoreException}, fail-closed) or whose key
 * is still in progress after the wait ({@code IdempotencyInProgressException}) is retried
 * with a back-off of its own, exponential up to a cap and never exhausted, so that an
 * outage costs about one delivery per interval per consumer and no offset is skipped. The
 * deliveries held back are logged by {@link HeldBackDeliveries}: a WARN when they begin, at
 * most a line per interval, an INFO when claims succeed again. Any other exception keeps
 * the handler's own back-off.
 * <p>
 * The back-off is the handler's back-off function ({@code setBackOffFunction}), which
 * replaces one the application set.
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
	 * such as a {@link DefaultErrorHandler}, and the default back-off of the claims that
	 * failed for the store or a key in progress (100 ms, doubled after each failure, up to
	 * 1 s).
	 * @param <T> the processor's type
	 * @param processor the processor to classify
	 * @return the same processor
	 */
	public static <T extends FailedRecordProcessor> T classify(T processor) {
		return classify(processor, defaultBackOff());
	}

	/**
	 * Registers {@link #notRetryable()} with an error handler or after-rollback processor,
	 * and {@code backOff} for the records whose claims failed for the store or a key in
	 * progress.
	 * @param <T> the processor's type
	 * @param processor the processor to classify
	 * @param backOff the back-off of those records; an execution of it that stops starts
	 * again, so they are never recovered (skipped)
	 * @return the same processor
	 */
	@SuppressWarnings("unchecked")
	public static <T extends FailedRecordProcessor> T classify(T processor, BackOff backOff) {
		processor.addNotRetryableExceptions(NOT_RETRYABLE.toArray(Class[]::new));
		processor.setBackOffFunction(new HeldBack(backOff));
		return processor;
	}

	/**
	 * The default back-off of the records whose claims failed for the store or a key in
	 * progress: 100 ms, doubled after each failure, up to 1 s, never exhausted.
	 * @return a new back-off
	 */
	public static ExponentialBackOff defaultBackOff() {
		ExponentialBackOff backOff = new ExponentialBackOff(100, 2.0);
		backOff.setMaxInterval(1000);
		return backOff;
	}

	/**
	 * A call on this consumer thread was not held back: claims succeed again.
	 */
	static void claimed() {
		HeldBackDeliveries log = HELD_BACK.get();
		if (log != null) {
			HELD_BACK.remove();
			log.succeeded();
		}
	}

	/** The log of the deliveries this consumer thread holds back, until a claim succeeds. */
	private static final ThreadLocal<@Nullable HeldBackDeliveries> HELD_BACK = new ThreadLocal<>();

	/**
	 * The back-off function: the back-off for a record whose claim failed for the store or
	 * a key in progress, the handler's own for anything else.
	 */
	private static final class HeldBack
			implements BiFunction<ConsumerRecord<?, ?>, @Nullable Exception, @Nullable BackOff> {

		private final BackOff backOff;

		private final Map<Thread, HeldBackDeliveries> logs = new ConcurrentHashMap<>();

		HeldBack(BackOff backOff) {
			this.backOff = backOff;
		}

		@Override
		public @Nullable BackOff apply(ConsumerRecord<?, ?> record, @Nullable Exception exception) {
			IdempotencyException cause = HeldBackDeliveries.cause(exception);
			if (cause == null) {
				return null;
			}
			Thread consumer = Thread.currentThread();
			this.logs.keySet().removeIf((thread) -> !thread.isAlive());
			HeldBackDeliveries log = this.logs.computeIfAbsent(consumer,
					(thread) -> new HeldBackDeliveries("Kafka consumer '" + thread.getName() + "'",
							"the error handler's back-off " + this.backOff
									+ " (idempotency.listener-back-off.*), never exhausted: no offset is skipped"));
			return () -> new Logged(this.backOff, cause, log);
		}

	}

	/**
	 * An execution of the back-off that logs each delivery it holds back and starts again
	 * instead of stopping.
	 */
	private static final class Logged implements BackOffExecution {

		private final BackOff backOff;

		private final IdempotencyException cause;

		private final HeldBackDeliveries log;

		private BackOffExecution execution;

		Logged(BackOff backOff, IdempotencyException cause, HeldBackDeliveries log) {
			this.backOff = backOff;
			this.cause = cause;
			this.log = log;
			this.execution = backOff.start();
		}

		@Override
		public long nextBackOff() {
			long interval = this.execution.nextBackOff();
			if (interval == STOP) {
				this.execution = this.backOff.start();
				interval = this.execution.nextBackOff();
				if (interval == STOP) {
					interval = 0;
				}
			}
			HELD_BACK.set(this.log);
			this.log.heldBack(this.cause, Duration.ofMillis(interval));
			return interval;
		}

		@Override
		public String toString() {
			return this.execution.toString();
		}

	}

}
