package io.github.idempotency.kafka;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.HeldBackDeliveries;
import io.github.idempotency.internal.InvalidIdempotentMethodException;
import io.github.idempotency.internal.RedeliveryRequested;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.KotlinDetector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.kafka.annotation.KafkaHandler;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.AbstractKafkaListenerContainerFactory;
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.Message;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Acknowledges, for an {@code @Idempotent @KafkaListener} method that acknowledges by hand
 * ({@code AckMode.MANUAL} or {@code MANUAL_IMMEDIATE}), a record the starter answers
 * without running the method (a duplicate): through the method's {@link Acknowledgment}
 * argument, or, for a method that takes a {@link Consumer} instead, by committing the
 * record's offset with it. Records that fail (a key reused, missing or invalid, a replayed
 * failure, a key in progress) are thrown to the container's error handler as before: its
 * recoverer and back-off decide, and a handler that commits recovered records
 * ({@code setCommitRecovered(true)}) commits them.
 * <p>
 * A batch method ({@code @Idempotent(batch = ...)}) receives an {@link Acknowledgment} whose
 * {@code acknowledge(index)} and {@code nack(index, sleep)} take an index in the list the
 * method received; a batch in which nothing runs is acknowledged whole, and one whose
 * records after the last that ran were all answered is acknowledged to its end once the
 * method acknowledged everything it received.
 * <p>
 * A method that asks for its record again ({@code nack(sleep)}, or a batch's
 * {@code nack(index, sleep)}) and returns has that record, and a batch's records after it,
 * given back instead of completed, so that the redelivery runs them.
 * <p>
 * A manual-ack listener that gives the starter no way to acknowledge (neither an
 * {@code Acknowledgment} nor a {@code Consumer} and the record) fails the application's
 * start, naming the method and what to add. The ack mode is read from the listener's
 * container factory ({@code containerFactory}, else {@code kafkaListenerContainerFactory}).
 */
public class KafkaListenerAcknowledgement implements IdempotentMethodAdapter, Ordered, SmartInitializingSingleton {

	private final Queue<Listener> listeners = new ConcurrentLinkedQueue<>();

	private static final String DEFAULT_FACTORY = "kafkaListenerContainerFactory";

	private final BeanFactory beanFactory;

	public KafkaListenerAcknowledgement(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public int getOrder() {
		return 100;
	}

	@Override
	public @Nullable Adaptation adapt(Method method, Class<?> targetClass, Idempotent annotation) {
		KafkaListener listener = listener(method, targetClass);
		if (listener == null || isAsync(method)) {
			// not a listener; or one whose result Spring Kafka acknowledges when it completes
			return null;
		}
		boolean batch = StringUtils.hasText(annotation.batch());
		int acknowledgment = parameter(method, Acknowledgment.class);
		int consumer = parameter(method, Consumer.class);
		int record = parameter(method, ConsumerRecord.class);
		if (record < 0) {
			record = parameter(method, Message.class);
		}
		Adaptation adaptation = null;
		if (acknowledgment >= 0 || (consumer >= 0 && record >= 0 && !batch)) {
			if (!StringUtils.hasText(annotation.key())) {
				throw new IllegalArgumentException("'key' must not be empty (only an HTTP handler method, Spring MVC or "
						+ "WebFlux, takes its key from a request header)");
			}
			adaptation = (acknowledgment < 0) ? new Acknowledging(-1, consumer, record, new boolean[1])
					: batch ? new BatchAcknowledging(acknowledgment) : new Acknowledging(acknowledgment, -1, -1, null);
		}
		// the ack mode is the container factory's, read once every bean exists (the factory may
		// need beans of the listener's own class)
		this.listeners.add(new Listener(method, targetClass, listener, (adaptation != null) ? null
				: problem(batch, consumer, record), adaptation));
		if (adaptation == null && !StringUtils.hasText(annotation.key())) {
			// no key: the method's resolution fails, naming it, as for any method
			return null;
		}
		return new Reporting(adaptation);
	}

	/**
	 * Tells the error handler's back-off ({@link IdempotencyKafkaErrors#claimed()}) that
	 * the claims of this consumer succeed again once a call is not held back for the store
	 * or a key in progress; runs the call with its acknowledging adaptation, if any.
	 */
	private record Reporting(@Nullable Adaptation adaptation) implements Adaptation {

		@Override
		public Type resultType(Type declared) {
			return (this.adaptation != null) ? this.adaptation.resultType(declared) : declared;
		}

		@Override
		public boolean fingerprinted(boolean declared) {
			return (this.adaptation != null) ? this.adaptation.fingerprinted(declared) : declared;
		}

		@Override
		public List<Class<? extends Throwable>> recordFailureFor(List<Class<? extends Throwable>> declared) {
			return (this.adaptation != null) ? this.adaptation.recordFailureFor(declared) : declared;
		}

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			try {
				Object result = (this.adaptation != null) ? this.adaptation.invoke(key, payload, invocation)
						: invocation.execute(key, payload, invocation::proceed);
				IdempotencyKafkaErrors.claimed();
				return result;
			}
			catch (Throwable ex) {
				if (HeldBackDeliveries.cause(ex) == null) {
					IdempotencyKafkaErrors.claimed();
				}
				throw ex;
			}
		}

		@Override
		public void invokeBatch(BatchCall call) throws Throwable {
			try {
				if (this.adaptation != null) {
					this.adaptation.invokeBatch(call);
				}
				else {
					call.execute((positions, arguments) -> arguments);
				}
				IdempotencyKafkaErrors.claimed();
			}
			catch (Throwable ex) {
				if (HeldBackDeliveries.cause(ex) == null) {
					IdempotencyKafkaErrors.claimed();
				}
				throw ex;
			}
		}

	}

	/**
	 * What a manual-ack listener without an {@code Acknowledgment} lacks, or {@code null}
	 * when committing with its {@code Consumer} works.
	 */
	private static String problem(boolean batch, int consumer, int record) {
		if (batch) {
			return "add an " + Acknowledgment.class.getName()
					+ " parameter (a batch is acknowledged through it), or use another AckMode";
		}
		return "add an " + Acknowledgment.class.getName()
				+ " parameter and call acknowledge() (or take a Consumer and the ConsumerRecord, and commit), "
				+ "or use another AckMode";
	}

	/**
	 * Fails the start for a manual-ack listener the starter cannot acknowledge for, and
	 * tells the listeners that commit with their {@code Consumer} whether they must.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		for (Listener listener : this.listeners) {
			AckMode mode = ackMode(listener.annotation());
			boolean manual = mode == AckMode.MANUAL || mode == AckMode.MANUAL_IMMEDIATE;
			if (listener.adaptation() instanceof Acknowledging acknowledging && acknowledging.manual() != null) {
				acknowledging.manual()[0] = manual;
			}
			if (manual && listener.problem() != null) {
				throw new InvalidIdempotentMethodException(ClassUtils.getUserClass(listener.targetClass()).getName()
						+ "." + listener.method().getName(), "its @KafkaListener acknowledges by hand (AckMode." + mode
						+ "), but a record the starter answers without running it (a duplicate) could not be "
						+ "acknowledged", listener.problem(), null);
			}
		}
	}

	private record Listener(Method method, Class<?> targetClass, KafkaListener annotation, @Nullable String problem,
			@Nullable Adaptation adaptation) {
	}

	private static @Nullable KafkaListener listener(Method method, Class<?> targetClass) {
		KafkaListener listener = AnnotatedElementUtils.findMergedAnnotation(method, KafkaListener.class);
		if (listener == null && AnnotatedElementUtils.hasAnnotation(method, KafkaHandler.class)) {
			listener = AnnotatedElementUtils.findMergedAnnotation(ClassUtils.getUserClass(targetClass),
					KafkaListener.class);
		}
		return listener;
	}

	private static boolean isAsync(Method method) {
		Class<?> type = method.getReturnType();
		// a suspend fun: Spring Kafka calls it as a Mono
		return KotlinDetector.isSuspendingFunction(method) || Future.class.isAssignableFrom(type)
				|| CompletionStage.class.isAssignableFrom(type)
				|| type.getName().equals("reactor.core.publisher.Mono");
	}

	private @Nullable AckMode ackMode(KafkaListener listener) {
		String name = StringUtils.hasText(listener.containerFactory()) ? resolve(listener.containerFactory())
				: DEFAULT_FACTORY;
		if (!this.beanFactory.containsBean(name)
				|| !this.beanFactory.isTypeMatch(name, AbstractKafkaListenerContainerFactory.class)) {
			return null;
		}
		return this.beanFactory.getBean(name, AbstractKafkaListenerContainerFactory.class)
			.getContainerProperties()
			.getAckMode();
	}

	private String resolve(String value) {
		if (this.beanFactory instanceof ConfigurableBeanFactory configurable) {
			String resolved = configurable.resolveEmbeddedValue(value);
			return (resolved != null) ? resolved : value;
		}
		return value;
	}

	private static int parameter(Method method, Class<?> type) {
		Class<?>[] types = method.getParameterTypes();
		for (int i = 0; i < types.length; i++) {
			if (type.isAssignableFrom(types[i])) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * A record listener: acknowledges a record the engine answered without running it.
	 */
	private record Acknowledging(int acknowledgment, int consumer, int record, boolean @Nullable [] manual)
			implements Adaptation {

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			boolean[] ran = { false };
			@Nullable Object[] arguments = invocation.arguments();
			Translated watched = (this.acknowledgment >= 0 && arguments[this.acknowledgment] instanceof Acknowledgment ack)
					? new Translated(ack, new int[] { 0 }) : null;
			IdempotentMethodAdapter.Action action = () -> {
				ran[0] = true;
				if (watched != null) {
					arguments[this.acknowledgment] = watched;
				}
				Object returned = invocation.proceed();
				if (watched != null && watched.nackedAt >= 0) {
					// the record comes again: its claim is given back, not completed
					throw new RedeliveryRequested(0, returned);
				}
				return returned;
			};
			Object result;
			try {
				result = invocation.execute(key, payload, action);
			}
			finally {
				if (watched != null) {
					arguments[this.acknowledgment] = watched.delegate;
				}
			}
			if (!ran[0]) {
				acknowledge(arguments);
			}
			return result;
		}

		private void acknowledge(@Nullable Object[] arguments) {
			if (this.acknowledgment >= 0) {
				if (arguments[this.acknowledgment] instanceof Acknowledgment ack) {
					ack.acknowledge();
				}
				return;
			}
			if (this.manual != null && this.manual[0] && arguments[this.consumer] instanceof Consumer<?, ?> consumer) {
				Object record = arguments[this.record];
				if (record instanceof ConsumerRecord<?, ?> consumerRecord) {
					commit(consumer, consumerRecord.topic(), consumerRecord.partition(), consumerRecord.offset());
				}
				else if (record instanceof Message<?> message
						&& message.getHeaders().get(KafkaHeaders.RECEIVED_TOPIC) instanceof String topic
						&& message.getHeaders().get(KafkaHeaders.RECEIVED_PARTITION) instanceof Integer partition
						&& message.getHeaders().get(KafkaHeaders.OFFSET) instanceof Long offset) {
					commit(consumer, topic, partition, offset);
				}
			}
		}

		private static void commit(Consumer<?, ?> consumer, String topic, int partition, long offset) {
			consumer.commitSync(Map.of(new TopicPartition(topic, partition), new OffsetAndMetadata(offset + 1)));
		}

	}

}
