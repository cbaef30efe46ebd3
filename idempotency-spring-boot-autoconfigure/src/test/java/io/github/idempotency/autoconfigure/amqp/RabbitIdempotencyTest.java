package io.github.idempotency.autoconfigure.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyKeyReusedException;
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
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @RabbitListener} methods made idempotent, on a real RabbitMQ: duplicates are
 * acknowledged, not-retryable failures dead-lettered, in-progress ones requeued.
 */
class RabbitIdempotencyTest {

	private static final String KEY_HEADER = "idempotency-key";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final Queues queues = new Queues("idempotency-test-" + UUID.randomUUID());

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyRabbitAutoConfiguration.class,
				RabbitAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean("queues", Queues.class, () -> this.queues)
		.withBean(Effects.class, Effects::new)
		.withUserConfiguration(PaymentListener.class)
		.withPropertyValues("idempotency.backend=memory", "spring.rabbitmq.addresses=" + TestServers.rabbitMqUrl());

	@Test
	void duplicatesAreAcknowledgedWithoutEffect() {
		this.runner.run((context) -> {
			for (int i = 0; i < 3; i++) {
				send(context, "d-1", "100");
			}
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> hits(context) == 2);
			assertThat(effects.byKey).containsOnlyKeys("d-1");
			assertThat(effects.byKey.get("d-1")).hasValue(1);
			AmqpAdmin admin = context.getBean(AmqpAdmin.class);
			await().atMost(TIMEOUT)
				.untilAsserted(() -> assertThat(admin.getQueueInfo(this.queues.main()).getMessageCount()).isZero());
			assertThat(admin.getQueueInfo(this.queues.deadLetters()).getMessageCount()).isZero();
		});
	}

	@Test
	void aKeyReusedWithAnotherPayloadIsDeadLetteredAtOnce() {
		this.runner.run((context) -> {
			send(context, "m-1", "100");
			send(context, "m-1", "999");
			RabbitTemplate template = context.getBean(RabbitTemplate.class);
			Message deadLetter = template.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
			assertThat(deadLetter).isNotNull();
			assertThat(new String(deadLetter.getBody(), StandardCharsets.UTF_8)).isEqualTo("999");
			assertThat(deadLetter.getMessageProperties().<String>getHeader(KEY_HEADER)).isEqualTo("m-1");
			Effects effects = context.getBean(Effects.class);
			assertThat(effects.deliveriesByPayload.get("999")).hasValue(1);
			assertThat(effects.failures).singleElement().isInstanceOf(IdempotencyKeyReusedException.class);
			assertThat(effects.byKey.get("m-1")).hasValue(1);
		});
	}

	@Test
	void aKeyInProgressElsewhereIsRequeuedAndCompletedOnceReleased() {
		this.runner.run((context) -> {
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			RecordId id = new RecordId("rabbit-payment", "p-1");
			ClaimHandle elsewhere = store.claim(new ClaimRequest(id, "elsewhere", null, Duration.ofMinutes(5),
					Duration.ofDays(1))).acquiredHandle();
			send(context, "p-1", "100");
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> effects.deliveriesByPayload.getOrDefault("100", new AtomicInteger())
				.get() >= 3);
			assertThat(effects.byKey).isEmpty();
			elsewhere.release(new IllegalStateException("crashed"));
			await().atMost(TIMEOUT).until(() -> effects.byKey.containsKey("p-1"));
			AmqpAdmin admin = context.getBean(AmqpAdmin.class);
			await().atMost(TIMEOUT)
				.untilAsserted(() -> assertThat(admin.getQueueInfo(this.queues.main()).getMessageCount()).isZero());
			assertThat(effects.byKey.get("p-1")).hasValue(1);
			assertThat(admin.getQueueInfo(this.queues.deadLetters()).getMessageCount()).isZero();
		});
	}

	@Test
	void withListenerRetryAKeyReusedIsNotRetriedAndAKeyInProgressIs() {
		this.runner
			.withPropertyValues("spring.rabbitmq.listener.simple.retry.enabled=true",
					"spring.rabbitmq.listener.simple.retry.max-retries=3",
					"spring.rabbitmq.listener.simple.retry.initial-interval=20ms")
			.run((context) -> {
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				store.claim(new ClaimRequest(new RecordId("rabbit-payment", "r-2"), "elsewhere", null,
						Duration.ofMinutes(5), Duration.ofDays(1)));
				send(context, "r-1", "100");
				send(context, "r-1", "999");
				send(context, "r-2", "200");
				RabbitTemplate template = context.getBean(RabbitTemplate.class);
				Message first = template.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
				Message second = template.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
				assertThat(List.of(first, second)).extracting((message) -> new String(message.getBody(),
						StandardCharsets.UTF_8))
					.containsExactlyInAnyOrder("999", "200");
				Effects effects = context.getBean(Effects.class);
				assertThat(effects.deliveriesByPayload.get("999")).as("a reused key is not retried").hasValue(1);
				assertThat(effects.deliveriesByPayload.get("200")).as("a key in progress is retried").hasValue(4);
				assertThat(effects.byKey).containsOnlyKeys("r-1");
			});
	}

	private static void send(ApplicationContext context, String key, String amount) {
		Queues queues = context.getBean(Queues.class);
		Message message = MessageBuilder.withBody(amount.getBytes(StandardCharsets.UTF_8))
			.setHeader(KEY_HEADER, key)
			.build();
		context.getBean(RabbitTemplate.class).send("", queues.main(), message);
	}

	private static double hits(ApplicationContext context) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_OUTCOME, "hit")
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

		final Map<String, AtomicInteger> deliveriesByPayload = new ConcurrentHashMap<>();

		final List<Throwable> failures = new CopyOnWriteArrayList<>();

	}

	@Configuration(proxyBeanMethods = false)
	static class PaymentListener {

		private final Effects effects;

		private final Charger charger;

		PaymentListener(Effects effects, Charger charger) {
			this.effects = effects;
			this.charger = charger;
		}

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

		@Bean
		static Charger charger(Effects effects) {
			return new Charger(effects);
		}

		@RabbitListener(queues = "#{@queues.main()}")
		void onPayment(Message message) {
			String amount = new String(message.getBody(), StandardCharsets.UTF_8);
			this.effects.deliveriesByPayload.computeIfAbsent(amount, (key) -> new AtomicInteger()).incrementAndGet();
			try {
				this.charger.charge(message.getMessageProperties().getHeader(KEY_HEADER), amount);
			}
			catch (RuntimeException ex) {
				this.effects.failures.add(ex);
				throw ex;
			}
		}

	}

	static class Charger {

		private final Effects effects;

		Charger(Effects effects) {
			this.effects = effects;
		}

		@Idempotent(key = "#key", payload = "#amount", workflow = "rabbit-payment",
				onInProgress = InProgressPolicy.REJECT)
		public void charge(String key, String amount) {
			this.effects.byKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

	}

}
