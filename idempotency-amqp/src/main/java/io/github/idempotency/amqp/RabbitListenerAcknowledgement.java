package io.github.idempotency.amqp;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

import com.rabbitmq.client.Channel;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyException;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.InvalidIdempotentMethodException;
import io.github.idempotency.internal.RedeliveryRequested;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerContainerFactory;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodParameter;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Settles, for an {@code @Idempotent @RabbitListener} method that acknowledges by hand
 * ({@code AcknowledgeMode.MANUAL}), a delivery the starter answers without running the
 * method, on the method's {@link Channel} argument with the message's delivery tag:
 * <ul>
 * <li>a duplicate: {@code basicAck(tag, false)};</li>
 * <li>a not-retryable refusal (a key reused, missing or invalid, a replayed failure): thrown
 * as an {@link AmqpRejectAndDontRequeueException} that asks the container to reject the
 * message without requeue ({@code rejectManual}), to the queue's dead-letter exchange;</li>
 * <li>anything else before the method ran (a key in progress, a store outage):
 * {@code basicNack(tag, false, true)}, so it is redelivered, and rethrown; for a store
 * outage or a key in progress, after the pause of the container's
 * {@link IdempotencyRabbitListenerBackOff}.</li>
 * </ul>
 * When the method runs, it acknowledges as it always does; when it rejects the message
 * ({@code basicNack} or {@code basicReject}) and returns, the key is given back instead of
 * completed: with requeue the redelivery runs it, and without, to the dead-letter queue, so
 * does the message an operator moves back from there, as after an exception in
 * {@code AUTO} mode. A manual-ack listener without a
 * {@code Channel} parameter or a way to the delivery tag (Spring AMQP's or Spring's
 * {@code Message}, or {@code @Header(AmqpHeaders.DELIVERY_TAG)}), or a manual-ack batch
 * listener, fails the application's start, naming the method and what to add. The mode
 * is the listener's {@code ackMode}, else its container factory's
 * ({@code containerFactory}, else {@code rabbitListenerContainerFactory}).
 * <p>
 * A listener with an asynchronous result ({@code CompletableFuture}, {@code Mono}, a Kotlin
 * {@code suspend fun}) that does not acknowledge by hand has its not-retryable failures
 * marked to be rejected without requeue, which Spring AMQP, settling them itself, would
 * otherwise requeue for ever.
 */
public class RabbitListenerAcknowledgement implements IdempotentMethodAdapter, Ordered, SmartInitializingSingleton {

	private final Queue<Listener> listeners = new ConcurrentLinkedQueue<>();

	private static final String DEFAULT_FACTORY = "rabbitListenerContainerFactory";

	private final BeanFactory beanFactory;

	public RabbitListenerAcknowledgement(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public int getOrder() {
		return 100;
	}

	@Override
	public @Nullable Adaptation adapt(Method method, Class<?> targetClass, Idempotent annotation) {
		RabbitListener listener = listener(method, targetClass);
		if (listener == null) {
			return null;
		}
		String problem = null;
		Settling adaptation = null;
		int channel = parameter(method, Channel.class);
		int tag = deliveryTagHeader(method);
		int message = parameter(method, org.springframework.amqp.core.Message.class);
		if (message < 0) {
			message = parameter(method, Message.class);
		}
		if (StringUtils.hasText(annotation.batch()) || parameter(method, List.class) >= 0) {
			problem = "a batch listener with manual acknowledgement is not supported; use AcknowledgeMode.AUTO for "
					+ "it, or a listener of one message";
		}
		else if (channel < 0) {
			problem = "add a " + Channel.class.getName()
					+ " parameter (and call basicAck(deliveryTag, false) on it), or use AcknowledgeMode.AUTO";
		}
		else if (tag < 0 && message < 0) {
			problem = "it cannot read the delivery tag; add a Message parameter or "
					+ "@Header(AmqpHeaders.DELIVERY_TAG) long deliveryTag";
		}
		else {
			if (!StringUtils.hasText(annotation.key())) {
				throw new IllegalArgumentException("'key' must not be empty (only an HTTP handler method, Spring MVC or "
						+ "WebFlux, takes its key from a request header)");
			}
			adaptation = new Settling(channel, tag, message, new boolean[1]);
		}
		// the ack mode may be the container factory's, read once every bean exists (the factory
		// may need beans of the listener's own class)
		this.listeners.add(new Listener(method, targetClass, listener, problem, adaptation));
		if (adaptation == null && AsyncListenerRejection.isAsync(method) && StringUtils.hasText(annotation.key())) {
			// Spring AMQP settles its failure itself, requeueing what is not marked as rejected
			return AsyncListenerRejection.INSTANCE;
		}
		return adaptation;
	}

	/**
	 * Fails the start for a manual-ack listener the starter cannot settle for, and tells the
	 * others whether they settle.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		for (Listener listener : this.listeners) {
			boolean manual = ackMode(listener.annotation()) == AcknowledgeMode.MANUAL;
			if (listener.adaptation() != null) {
				listener.adaptation().manual()[0] = manual;
			}
			if (manual && listener.problem() != null) {
				throw new InvalidIdempotentMethodException(ClassUtils.getUserClass(listener.targetClass()).getName()
						+ "." + listener.method().getName(), "its @RabbitListener acknowledges by hand "
						+ "(AcknowledgeMode.MANUAL), but a message the starter answers without running it (a duplicate) "
						+ "could not be acknowledged", listener.problem(), null);
			}
		}
	}

	private record Listener(Method method, Class<?> targetClass, RabbitListener annotation, @Nullable String problem,
			@Nullable Settling adaptation) {
	}

	private static @Nullable RabbitListener listener(Method method, Class<?> targetClass) {
		Set<RabbitListener> listeners = AnnotatedElementUtils.findMergedRepeatableAnnotations(method,
				RabbitListener.class);
		if (listeners.isEmpty() && AnnotatedElementUtils.hasAnnotation(method, RabbitHandler.class)) {
			listeners = AnnotatedElementUtils.findMergedRepeatableAnnotations(ClassUtils.getUserClass(targetClass),
					RabbitListener.class);
		}
		return listeners.isEmpty() ? null : listeners.iterator().next();
	}

	private @Nullable AcknowledgeMode ackMode(RabbitListener listener) {
		if (StringUtils.hasText(listener.ackMode())) {
			return AcknowledgeMode.valueOf(resolve(listener.ackMode()).trim());
		}
		String name = StringUtils.hasText(listener.containerFactory()) ? resolve(listener.containerFactory())
				: DEFAULT_FACTORY;
		if (!this.beanFactory.containsBean(name)
				|| !this.beanFactory.isTypeMatch(name, RabbitListenerContainerFactory.class)) {
			return null;
		}
		// the factory keeps its mode to itself; a container it creates (never started) tells
		Object container = this.beanFactory.getBean(name, RabbitListenerContainerFactory.class)
			.createListenerContainer();
		return (container instanceof AbstractMessageListenerContainer created) ? created.getAcknowledgeMode() : null;
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

	private static int deliveryTagHeader(Method method) {
		for (int i = 0; i < method.getParameterCount(); i++) {
			Header header = new MethodParameter(method, i).getParameterAnnotation(Header.class);
			if (header != null && (AmqpHeaders.DELIVERY_TAG.equals(header.value())
					|| AmqpHeaders.DELIVERY_TAG.equals(header.name()))) {
				return i;
			}
		}
		return -1;
	}

	private record Settling(int channel, int tag, int message, boolean[] manual) implements Adaptation {

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			if (!this.manual[0]) {
				// the container acknowledges
				return invocation.execute(key, payload, invocation::proceed);
			}
			boolean[] ran = { false };
			@Nullable Object[] arguments = invocation.arguments();
			Channel delivered = channel(arguments);
			Long deliveryTag = tag(arguments);
			IdempotentMethodAdapter.Action action = () -> {
				ran[0] = true;
				if (delivered == null || deliveryTag == null) {
					return invocation.proceed();
				}
				Rejections rejections = new Rejections(delivered, deliveryTag);
				arguments[this.channel] = rejections.channel();
				Object returned;
				try {
					returned = invocation.proceed();
				}
				finally {
					arguments[this.channel] = delivered;
				}
				if (rejections.rejected) {
					// the message comes again (requeued, or moved back from the dead letters): its
					// claim is given back, not completed
					throw new RedeliveryRequested(0, returned);
				}
				return returned;
			};
			Object result;
			try {
				result = invocation.execute(key, payload, action);
			}
			catch (Throwable ex) {
				if (ran[0]) {
					throw ex;
				}
				if (ex instanceof IdempotencyException idempotency && !idempotency.isRetryable()) {
					// the container rejects it, once: to the dead-letter exchange
					throw new AmqpRejectAndDontRequeueException(ex.getMessage(), true, ex);
				}
				if (delivered != null && deliveryTag != null) {
					// a store outage or a key in progress: the consumer pauses before the message is
					// back in the queue, as the container's back-off does before a requeue in AUTO mode
					IdempotencyRabbitListenerBackOff.pauseNow(ex);
					delivered.basicNack(deliveryTag, false, true);
				}
				throw ex;
			}
			if (!ran[0] && delivered != null && deliveryTag != null) {
				delivered.basicAck(deliveryTag, false);
			}
			return result;
		}

		private @Nullable Channel channel(@Nullable Object[] arguments) {
			return (arguments[this.channel] instanceof Channel channel) ? channel : null;
		}

		private @Nullable Long tag(@Nullable Object[] arguments) {
			if (this.tag >= 0 && arguments[this.tag] instanceof Number number) {
				return number.longValue();
			}
			Object message = (this.message >= 0) ? arguments[this.message] : null;
			if (message instanceof org.springframework.amqp.core.Message amqp) {
				return amqp.getMessageProperties().getDeliveryTag();
			}
			if (message instanceof Message<?> spring
					&& spring.getHeaders().get(AmqpHeaders.DELIVERY_TAG) instanceof Number number) {
				return number.longValue();
			}
			return null;
		}

	}

	/**
	 * The method's {@link Channel}, watched for a rejection of its message
	 * ({@code basicNack} or {@code basicReject}, with or without requeue): everything goes to
	 * the channel as it is.
	 */
	private static final class Rejections implements InvocationHandler {

		private final Channel delegate;

		private final long tag;

		private volatile boolean rejected;

		Rejections(Channel delegate, long tag) {
			this.delegate = delegate;
			this.tag = tag;
		}

		Channel channel() {
			return (Channel) Proxy.newProxyInstance(Channel.class.getClassLoader(), new Class<?>[] { Channel.class },
					this);
		}

		@Override
		public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
			if (method.getName().equals("basicNack") && args != null && args.length == 3) {
				this.rejected |= covers((long) args[0], (boolean) args[1]);
			}
			else if (method.getName().equals("basicReject") && args != null && args.length == 2) {
				this.rejected |= covers((long) args[0], false);
			}
			if (method.getDeclaringClass() == Object.class) {
				return switch (method.getName()) {
					case "equals" -> proxy == args[0];
					case "hashCode" -> System.identityHashCode(proxy);
					default -> "Watched " + this.delegate;
				};
			}
			try {
				return method.invoke(this.delegate, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		}

		private boolean covers(long tag, boolean multiple) {
			return tag == this.tag || (multiple && tag >= this.tag);
		}

	}

}
