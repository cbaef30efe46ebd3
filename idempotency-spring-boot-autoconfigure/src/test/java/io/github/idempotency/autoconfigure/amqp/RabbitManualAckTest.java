package io.github.idempotency.autoconfigure.amqp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import com.rabbitmq.client.Channel;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.idempotency.Idempotent;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyRabbitAutoConfiguration;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.TestServers;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent @RabbitListener} methods that acknowledge by hand
 * ({@code acknowledge-mode=manual}), on a real RabbitMQ: a message the starter answers
 * without running the method is settled all the same. What a live consumer leaves
 * unacknowledged goes back to the queue when it stops, so the queue's depth after the
 * container stopped counts what was never acknowledged.
 */
class RabbitManualAckTest {

	private static final String KEY_HEADER = "idempotency-key";

	private static final String WORKFLOW = "manual-ack";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final Queues queues = new Queues("idempotency-manual-ack-" + UUID.randomUUID());

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyRabbitAutoConfiguration.class,
				RabbitAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean("queues", Queues.class, () -> this.queues)
		.withBean(Effects.class, Effects::new)
		.withPropertyValues("idempotency.backend=memory", "spring.rabbitmq.addresses=" + TestServers.rabbitMqUrl(),
				"spring.rabbitmq.listener.simple.acknowledge-mode=manual");

	@ParameterizedTest
	@MethodSource("listeners")
	void duplicatesAreAcknowledgedAndDoNotComeBackWhenTheConsumerStops(Class<?> listener) {
		this.runner.withUserConfiguration(listener).run((context) -> {
			for (int i = 0; i < 20; i++) {
				send(context, "d-" + i, "100");
			}
			for (int i = 0; i < 10; i++) {
				send(context, "d-" + i, "100");
			}
			await().atMost(TIMEOUT).until(() -> requests(context, "hit") == 10);
			assertQueuesEmptyOnceStopped(context);
			assertChargedOnce(context, 20);
		});
	}

	@Test
	void withAPrefetchBelowTheDuplicatesTheConsumerKeepsReceiving() {
		this.runner.withUserConfiguration(ManualListener.class)
			.withPropertyValues("spring.rabbitmq.listener.simple.prefetch=5")
			.run((context) -> {
				for (int i = 0; i < 10; i++) {
					send(context, "p-" + i, "100");
				}
				Effects effects = context.getBean(Effects.class);
				await().atMost(TIMEOUT).until(() -> effects.byKey.size() == 10);
				for (int i = 0; i < 10; i++) {
					send(context, "p-" + i, "100");
				}
				for (int i = 10; i < 30; i++) {
					send(context, "p-" + i, "100");
				}
				await().atMost(TIMEOUT).until(() -> effects.byKey.size() == 30);
				assertThat(requests(context, "hit")).isEqualTo(10);
				assertQueuesEmptyOnceStopped(context);
				assertChargedOnce(context, 30);
			});
	}

	@ParameterizedTest
	@MethodSource("listeners")
	void aKeyReusedWithAnotherPayloadIsRejectedToTheDeadLetterQueue(Class<?> listener) {
		this.runner.withUserConfiguration(listener).run((context) -> {
			send(context, "m-1", "100");
			send(context, "m-1", "999");
			Message deadLetter = context.getBean(RabbitTemplate.class)
				.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
			assertThat(deadLetter).as("dead-lettered").isNotNull();
			assertThat(new String(deadLetter.getBody(), StandardCharsets.UTF_8)).isEqualTo("999");
			assertThat(requests(context, "mismatch")).isOne();
			assertQueuesEmptyOnceStopped(context);
			assertChargedOnce(context, 1);
		});
	}

	@ParameterizedTest
	@MethodSource("listeners")
	void aKeyInProgressElsewhereIsRedeliveredAndChargedOnceReleased(Class<?> listener) {
		this.runner.withUserConfiguration(listener).run((context) -> {
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			ClaimHandle elsewhere = store.claim(new ClaimRequest(new RecordId(WORKFLOW, "i-1"), "elsewhere", null,
					Duration.ofMinutes(5), Duration.ofDays(1))).acquiredHandle();
			send(context, "i-1", "100");
			await().atMost(TIMEOUT).until(() -> requests(context, "conflict") >= 3);
			assertThat(context.getBean(Effects.class).byKey).isEmpty();
			elsewhere.release(new IllegalStateException("crashed"));
			await().atMost(TIMEOUT).until(() -> context.getBean(Effects.class).byKey.containsKey("i-1"));
			assertQueuesEmptyOnceStopped(context);
			assertChargedOnce(context, 1);
		});
	}

	/**
	 * The starter nacks a key in progress with requeue after the pause of the container's
	 * back-off, as the container requeues in AUTO mode: 100, 200, 400 and 800 ms before the
	 * second to the fifth delivery (without it, five deliveries take a few milliseconds).
	 */
	@ParameterizedTest
	@MethodSource("listeners")
	void aKeyInProgressElsewhereComesBackAfterPausesThatGrow(Class<?> listener) {
		this.runner.withUserConfiguration(listener).run((context) -> {
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			ClaimHandle elsewhere = store.claim(new ClaimRequest(new RecordId(WORKFLOW, "b-1"), "elsewhere", null,
					Duration.ofMinutes(5), Duration.ofDays(1))).acquiredHandle();
			long began = System.nanoTime();
			send(context, "b-1", "100");
			await().atMost(TIMEOUT).until(() -> requests(context, "conflict") >= 5);
			assertThat(Duration.ofNanos(System.nanoTime() - began)).as("five deliveries of a key in progress")
				.isGreaterThanOrEqualTo(Duration.ofMillis(1500));
			elsewhere.release(new IllegalStateException("crashed"));
			await().atMost(TIMEOUT).until(() -> context.getBean(Effects.class).byKey.containsKey("b-1"));
			assertQueuesEmptyOnceStopped(context);
			assertChargedOnce(context, 1);
		});
	}

	@Test
	void aMessageTheListenerRequeuesRunsWhenItComesAgain() {
		this.runner.withUserConfiguration(RequeueingListener.class).run((context) -> {
			for (String key : List.of("q-1", "nack-once", "reject-once")) {
				send(context, key, "100");
			}
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> effects.byKey.size() == 3);
			assertThat(effects.requeued).containsExactlyInAnyOrder("nack-once", "reject-once");
			assertQueuesEmptyOnceStopped(context);
			assertChargedOnce(context, 3);
		});
	}

	@Test
	void aMessageTheListenerDeadLettersRunsWhenMovedBack() {
		this.runner.withUserConfiguration(RequeueingListener.class).run((context) -> {
			for (String key : List.of("nack-to-dlq", "reject-to-dlq")) {
				send(context, key, "100");
			}
			RabbitTemplate rabbit = context.getBean(RabbitTemplate.class);
			for (int i = 0; i < 2; i++) {
				// an operator moves each dead letter back to its queue
				Message deadLetter = rabbit.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
				assertThat(deadLetter).as("dead-lettered").isNotNull();
				rabbit.send("", this.queues.main(), deadLetter);
			}
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> effects.byKey.size() == 2);
			assertThat(effects.requeued).containsExactlyInAnyOrder("nack-to-dlq", "reject-to-dlq");
			assertQueuesEmptyOnceStopped(context);
			assertChargedOnce(context, 2);
		});
	}

	@Test
	void aManualAckListenerWithoutChannelFailsTheStart() {
		this.runner.withUserConfiguration(NoChannelListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining("@Idempotent on " + NoChannelListener.class.getName() + ".onPayment")
				.hasMessageContaining("acknowledges by hand (AcknowledgeMode.MANUAL)")
				.hasMessageContaining("add a com.rabbitmq.client.Channel parameter");
		});
	}

	/**
	 * The ways a listener gets at its message's delivery tag: Spring AMQP's
	 * {@code Message}, Spring's {@code Message}, or the tag's header.
	 */
	static Stream<Class<?>> listeners() {
		return Stream.of(ManualListener.class, SpringMessageListener.class, DeliveryTagHeaderListener.class);
	}

	private void assertQueuesEmptyOnceStopped(ApplicationContext context) {
		context.getBean(RabbitListenerEndpointRegistry.class).stop();
		AmqpAdmin admin = context.getBean(AmqpAdmin.class);
		// what the consumer left unacknowledged is back in the queue now
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(admin.getQueueInfo(this.queues.main()).getMessageCount()).isZero());
	}

	private static void assertChargedOnce(ApplicationContext context, int keys) {
		assertThat(context.getBean(Effects.class).byKey).hasSize(keys)
			.allSatisfy((key, count) -> assertThat(count).hasValue(1));
	}

	private static void send(ApplicationContext context, String key, String amount) {
		Message message = MessageBuilder.withBody(amount.getBytes(StandardCharsets.UTF_8))
			.setContentType(MessageProperties.CONTENT_TYPE_TEXT_PLAIN)
			.setHeader(KEY_HEADER, key)
			.build();
		context.getBean(RabbitTemplate.class).send("", context.getBean(Queues.class).main(), message);
	}

	private static double requests(ApplicationContext context, String outcome) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_WORKFLOW, WORKFLOW, IdempotencyMeters.TAG_OUTCOME, outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * Names of this run's queues; both expire a minute after their last use.
	 *
	 * @param main the listener's queue
	 */
	record Queues(String main) {

		String deadLetters() {
			return this.main + ".dlq";
		}

	}

	static class Effects {

		final Map<String, AtomicInteger> byKey = new ConcurrentHashMap<>();

		/** The keys a listener put back in the queue, once each. */
		final Set<String> requeued = ConcurrentHashMap.newKeySet();

		void charge(String key) {
			this.byKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DeadLettered {

		@Bean
		Queue paymentQueue(Queues queues) {
			return QueueBuilder.nonDurable(queues.main())
				.expires(60_000)
				.deadLetterExchange("")
				.deadLetterRoutingKey(queues.deadLetters())
				.build();
		}

		@Bean
		Queue deadLetterQueue(Queues queues) {
			return QueueBuilder.nonDurable(queues.deadLetters()).expires(60_000).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ManualListener extends DeadLettered {

		private final Effects effects;

		ManualListener(Effects effects) {
			this.effects = effects;
		}

		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#message.messageProperties.headers['idempotency-key']",
				payload = "#message.body", workflow = WORKFLOW, onInProgress = InProgressPolicy.REJECT)
		public void onPayment(Message message, Channel channel) throws IOException {
			this.effects.byKey.computeIfAbsent(message.getMessageProperties().getHeader(KEY_HEADER),
					(key) -> new AtomicInteger())
				.incrementAndGet();
			channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SpringMessageListener extends DeadLettered {

		private final Effects effects;

		SpringMessageListener(Effects effects) {
			this.effects = effects;
		}

		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#message.headers['idempotency-key']", payload = "#message.payload", workflow = WORKFLOW,
				onInProgress = InProgressPolicy.REJECT)
		public void onPayment(org.springframework.messaging.Message<String> message, Channel channel)
				throws IOException {
			this.effects.charge(message.getHeaders().get(KEY_HEADER, String.class));
			channel.basicAck(message.getHeaders().get(AmqpHeaders.DELIVERY_TAG, Long.class), false);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DeliveryTagHeaderListener extends DeadLettered {

		private final Effects effects;

		DeliveryTagHeaderListener(Effects effects) {
			this.effects = effects;
		}

		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#key", payload = "#amount", workflow = WORKFLOW, onInProgress = InProgressPolicy.REJECT)
		public void onPayment(@Payload String amount, @Header(KEY_HEADER) String key,
				@Header(AmqpHeaders.DELIVERY_TAG) long deliveryTag, Channel channel) throws IOException {
			this.effects.charge(key);
			channel.basicAck(deliveryTag, false);
		}

	}

	/**
	 * Rejects a message the first time it sees it, with {@code basicNack} or
	 * {@code basicReject} by its key, back in its queue ({@code *-once}) or to the
	 * dead-letter queue ({@code *-to-dlq}), and returns.
	 */
	@Configuration(proxyBeanMethods = false)
	static class RequeueingListener extends DeadLettered {

		private final Effects effects;

		RequeueingListener(Effects effects) {
			this.effects = effects;
		}

		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#key", payload = "#amount", workflow = WORKFLOW, onInProgress = InProgressPolicy.REJECT)
		public void onPayment(@Payload String amount, @Header(KEY_HEADER) String key,
				@Header(AmqpHeaders.DELIVERY_TAG) long deliveryTag, Channel channel) throws IOException {
			// the first time: back in the queue (requeue), or to the dead-letter queue
			if (key.startsWith("nack-") && this.effects.requeued.add(key)) {
				channel.basicNack(deliveryTag, false, key.equals("nack-once"));
				return;
			}
			if (key.startsWith("reject-") && this.effects.requeued.add(key)) {
				channel.basicReject(deliveryTag, key.equals("reject-once"));
				return;
			}
			this.effects.charge(key);
			channel.basicAck(deliveryTag, false);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoChannelListener extends DeadLettered {

		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#message.messageProperties.headers['idempotency-key']", workflow = WORKFLOW)
		public void onPayment(Message message) {
		}

	}

}
