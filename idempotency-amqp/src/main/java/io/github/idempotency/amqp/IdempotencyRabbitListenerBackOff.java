package io.github.idempotency.amqp;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import com.rabbitmq.client.Channel;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.internal.HeldBackDeliveries;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Back-pressure on a store outage for a RabbitMQ listener container: an advice of the
 * container's advice chain that pauses the consumer before a delivery whose claim failed
 * (the store unreachable, fail-closed: {@code IdempotencyStoreException}; or the key still
 * in progress after the wait: {@code IdempotencyInProgressException}) is requeued, for an
 * interval that grows with each such failure of the consumer ({@link BackOff}, by default
 * 100 ms doubling up to 1 s) and starts again after a delivery that does not fail so. An
 * outage then costs about one redelivery per second per consumer instead of a hot loop, and
 * the consumer notices the store's return within one interval.
 * <p>
 * A listener that acknowledges by hand nacks such a delivery itself
 * ({@link RabbitListenerAcknowledgement}); it pauses first, through {@link #pauseNow}, so
 * that the message is not back in the queue before the pause is over.
 * <p>
 * The deliveries held back are logged by {@link HeldBackDeliveries} (a WARN when it begins,
 * at most a line per interval, an INFO when claims succeed again), and the container's
 * error handler ({@link IdempotencyFatalExceptionStrategy#errorHandler()}) does not log them
 * one by one. A failure that is not requeued (rejected to the dead-letter exchange, or
 * recovered by listener retry) is not paused for. The pause ends early when the container
 * stops.
 */
public class IdempotencyRabbitListenerBackOff implements MethodInterceptor {

	/** The default: 100 ms, doubled after each failure, up to 1 s, never giving up. */
	public static final Duration DEFAULT_INITIAL_INTERVAL = Duration.ofMillis(100);

	/** The default multiplier. */
	public static final double DEFAULT_MULTIPLIER = 2.0;

	/** The default maximum interval. */
	public static final Duration DEFAULT_MAX_INTERVAL = Duration.ofSeconds(1);

	private static final long SLICE = TimeUnit.MILLISECONDS.toNanos(100);

	/** The delivery this thread runs, for a manual-ack listener that pauses before its nack. */
	private static final ThreadLocal<@Nullable Delivery> CURRENT = new ThreadLocal<>();

	/** The last failure paused for on this thread, which the error handler does not log again. */
	private static final ThreadLocal<@Nullable Throwable> PAUSED_FOR = new ThreadLocal<>();

	private final BackOff backOff;

	private final BooleanSupplier running;

	private final HeldBackDeliveries log;

	private final Map<Object, BackOffExecution> consumers = new ConcurrentHashMap<>();

	/**
	 * @param backOff the pause after each failed claim of one consumer (its executions
	 * should not stop; one that stops holds the interval at the last one)
	 * @param container the container whose consumers it pauses: a pause ends when it stops
	 */
	public IdempotencyRabbitListenerBackOff(BackOff backOff, AbstractMessageListenerContainer container) {
		this(backOff, container::isRunning, "RabbitMQ listener "
				+ ((container.getListenerId() != null) ? "'" + container.getListenerId() + "' " : "") + "of queues "
				+ Arrays.toString(container.getQueueNames()));
	}

	IdempotencyRabbitListenerBackOff(BackOff backOff, BooleanSupplier running, String listener) {
		this.backOff = backOff;
		this.running = running;
		this.log = new HeldBackDeliveries(listener, describe(backOff));
	}

	/**
	 * The default back-off: {@value #DEFAULT_MULTIPLIER} times longer after each failure,
	 * from 100 ms to 1 s.
	 * @return a new back-off
	 */
	public static ExponentialBackOff defaultBackOff() {
		ExponentialBackOff backOff = new ExponentialBackOff(DEFAULT_INITIAL_INTERVAL.toMillis(), DEFAULT_MULTIPLIER);
		backOff.setMaxInterval(DEFAULT_MAX_INTERVAL.toMillis());
		return backOff;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object[] arguments = invocation.getArguments();
		Object consumer = (arguments.length > 0 && arguments[0] instanceof Channel channel) ? channel
				: Thread.currentThread();
		Delivery delivery = new Delivery(this, consumer);
		Delivery previous = CURRENT.get();
		CURRENT.set(delivery);
		try {
			Object result = invocation.proceed();
			succeeded(consumer);
			return result;
		}
		catch (Throwable ex) {
			IdempotencyException cause = HeldBackDeliveries.cause(ex);
			if (cause == null || !requeued(ex)) {
				if (cause == null) {
					succeeded(consumer);
				}
				throw ex;
			}
			if (!delivery.paused) {
				pause(consumer, cause);
			}
			PAUSED_FOR.set(ex);
			throw ex;
		}
		finally {
			CURRENT.set(previous);
		}
	}

	/**
	 * Pauses the consumer running on this thread now, before a listener that acknowledges
	 * by hand requeues a delivery that failed for {@code failure}; the advice does not pause
	 * again for it. Does nothing outside a container with this advice, or for a failure that
	 * is not held back.
	 * @param failure why the delivery is requeued
	 */
	static void pauseNow(Throwable failure) {
		Delivery delivery = CURRENT.get();
		IdempotencyException cause = HeldBackDeliveries.cause(failure);
		if (delivery != null && cause != null && !delivery.paused) {
			delivery.paused = true;
			delivery.backOff.pause(delivery.consumer, cause);
		}
	}

	/**
	 * Whether {@code failure} is the one this thread last paused for (logged by the
	 * back-off, so the error handler does not log it again); forgets it.
	 * @param failure what the error handler is given
	 * @return {@code true} for a failure held back
	 */
	static boolean pausedFor(Throwable failure) {
		Throwable paused = PAUSED_FOR.get();
		PAUSED_FOR.remove();
		return paused != null && paused == failure;
	}

	private void pause(Object consumer, IdempotencyException cause) {
		if (consumer instanceof Channel) {
			this.consumers.keySet().removeIf((key) -> key instanceof Channel channel && !channel.isOpen());
		}
		BackOffExecution execution = this.consumers.computeIfAbsent(consumer, (key) -> this.backOff.start());
		long interval = execution.nextBackOff();
		if (interval == BackOffExecution.STOP) {
			// an execution that gave up: start again from its last (longest) interval
			execution = this.backOff.start();
			this.consumers.put(consumer, execution);
			interval = execution.nextBackOff();
		}
		if (interval <= 0 || interval == BackOffExecution.STOP) {
			return;
		}
		this.log.heldBack(cause, Duration.ofMillis(interval));
		long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(interval);
		try {
			for (long left = end - System.nanoTime(); left > 0 && this.running.getAsBoolean(); left = end
					- System.nanoTime()) {
				TimeUnit.NANOSECONDS.sleep(Math.min(left, SLICE));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void succeeded(Object consumer) {
		if (this.consumers.remove(consumer) != null || this.log.isHolding()) {
			this.log.succeeded();
		}
	}

	/**
	 * Whether the container puts the delivery back in the queue: not when the failure asks
	 * for a rejection without requeue (to the dead-letter exchange, or what listener retry's
	 * recoverer throws) or an acknowledgement.
	 */
	private static boolean requeued(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof AmqpRejectAndDontRequeueException
					|| current instanceof ImmediateAcknowledgeAmqpException) {
				return false;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return true;
	}

	private static String describe(BackOff backOff) {
		if (backOff instanceof ExponentialBackOff exponential) {
			return "each consumer pauses " + exponential.getInitialInterval() + " ms before the first requeue, "
					+ exponential.getMultiplier() + " times longer before each next one, up to "
					+ exponential.getMaxInterval() + " ms: idempotency.listener-back-off.*";
		}
		return "each consumer pauses before each requeue: " + backOff;
	}

	private static final class Delivery {

		private final IdempotencyRabbitListenerBackOff backOff;

		private final Object consumer;

		private boolean paused;

		Delivery(IdempotencyRabbitListenerBackOff backOff, Object consumer) {
			this.backOff = backOff;
			this.consumer = consumer;
		}

	}

}
