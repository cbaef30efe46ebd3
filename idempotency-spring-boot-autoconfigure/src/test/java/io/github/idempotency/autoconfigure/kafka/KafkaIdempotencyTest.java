package io.github.idempotency.autoconfigure.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.util.backoff.FixedBackOff;

import static io.github.idempotency.autoconfigure.kafka.KafkaTests.awaitAssignment;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.container;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.record;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.requests;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.template;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @KafkaListener} methods made idempotent, on an in-process KRaft broker with three
 * partitions per topic.
 */
@EmbeddedKafka(partitions = 3, topics = { KafkaIdempotencyTest.PAYMENTS, KafkaIdempotencyTest.RESTART,
		KafkaIdempotencyTest.REUSED, KafkaIdempotencyTest.DEAD_LETTERS, KafkaIdempotencyTest.WRONG_KEY,
		KafkaIdempotencyTest.WRONG_KEY_DEAD_LETTERS })
class KafkaIdempotencyTest {

	static final String PAYMENTS = "payments";

	static final String RESTART = "restart";

	static final String REUSED = "reused";

	/** Spring Kafka 4's default dead-letter topic: the topic name and {@code -dlt}. */
	static final String DEAD_LETTERS = REUSED + "-dlt";

	static final String WRONG_KEY = "wrong-key";

	static final String WRONG_KEY_DEAD_LETTERS = WRONG_KEY + "-dlt";

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final ApplicationContextRunner runner = KafkaTests.runner()
		.withBean(Effects.class, Effects::new);

	@Test
	void duplicatesSpreadOverPartitionsAndThreadsHaveOneEffectEach() {
		this.runner.withUserConfiguration(PaymentListener.class).run((context) -> {
			awaitAssignment(container(context, PAYMENTS), TIMEOUT);
			KafkaTemplate<String, String> template = template(context);
			for (int i = 0; i < 300; i++) {
				// keys 0-99 are sent twice, each time to another partition
				String key = "k-" + (i % 200);
				template.send(record(PAYMENTS, i % 3, key, "100"));
			}
			template.flush();
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> hits(context, "payment") == 100);
			assertThat(effects.byKey).hasSize(200).allSatisfy((key, count) -> assertThat(count).hasValue(1));
			assertThat(effects.threads).hasSizeGreaterThan(1);
		});
	}

	@Test
	void aConsumerRestartedBeforeCommittingReadsAgainWithoutASecondEffect() {
		this.runner.withUserConfiguration(RestartListener.class)
			.withPropertyValues("spring.kafka.listener.ack-mode=manual")
			.run((context) -> {
				ConcurrentMessageListenerContainer<?, ?> container = container(context, RESTART);
				awaitAssignment(container, TIMEOUT);
				KafkaTemplate<String, String> template = template(context);
				for (int i = 0; i < 30; i++) {
					template.send(record(RESTART, i % 3, "r-" + i, "100"));
				}
				template.flush();
				Effects effects = context.getBean(Effects.class);
				await().atMost(TIMEOUT).until(() -> effects.byKey.size() == 30);
				// nothing was acknowledged: no offset is committed
				container.stop();
				int deliveredBeforeRestart = effects.deliveries.get();
				container.start();
				await().atMost(TIMEOUT).until(() -> effects.deliveries.get() >= deliveredBeforeRestart + 30);
				await().atMost(TIMEOUT).until(() -> hits(context, "restart") >= 30);
				assertThat(effects.byKey).hasSize(30).allSatisfy((key, count) -> assertThat(count).hasValue(1));
			});
	}

	@Test
	void aKeyReusedWithAnotherPayloadGoesToTheDeadLetterTopicWithoutRetries() {
		this.runner.withUserConfiguration(ReusedKeyListener.class).run((context) -> {
			KafkaTemplate<String, String> template = template(context);
			template.send(record(REUSED, 0, "order-1", "100"));
			template.send(record(REUSED, 0, "order-1", "999"));
			template.flush();
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> effects.deadLetters.size() == 1);
			ConsumerRecord<String, String> deadLetter = effects.deadLetters.get(0);
			assertThat(deadLetter.value()).isEqualTo("999");
			assertThat(new String(deadLetter.headers().lastHeader("kafka_dlt-exception-fqcn").value(),
					StandardCharsets.UTF_8))
				.contains("ListenerExecutionFailedException");
			assertThat(new String(deadLetter.headers().lastHeader("kafka_dlt-exception-cause-fqcn").value(),
					StandardCharsets.UTF_8))
				.isEqualTo(IdempotencyKeyReusedException.class.getName());
			assertThat(effects.attemptsByValue.get("999")).hasValue(1);
			assertThat(effects.byKey).containsOnlyKeys("order-1");
		});
	}

	@Test
	void aKeyExpressionThatFailsOnTheRecordGoesToTheDeadLetterTopicWithoutRetries() {
		this.runner.withUserConfiguration(WrongKeyListener.class).run((context) -> {
			KafkaTemplate<String, String> template = template(context);
			template.send(record(WRONG_KEY, 0, "w-1", "100"));
			template.flush();
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> effects.deadLetters.size() == 1);
			ConsumerRecord<String, String> deadLetter = effects.deadLetters.get(0);
			assertThat(deadLetter.value()).isEqualTo("100");
			assertThat(new String(deadLetter.headers().lastHeader("kafka_dlt-exception-cause-fqcn").value(),
					StandardCharsets.UTF_8))
				.isEqualTo(InvalidIdempotencyKeyException.class.getName());
			assertThat(effects.attemptsByValue.get("100")).as("not retried").hasValue(1);
			assertThat(requests(context, WRONG_KEY, "invalid_key")).isOne();
			assertThat(effects.byKey).isEmpty();
		});
	}

	private static double hits(ApplicationContext context, String workflow) {
		return requests(context, workflow, "hit");
	}

	static class Effects {

		final Map<String, AtomicInteger> byKey = new ConcurrentHashMap<>();

		final Map<String, AtomicInteger> attemptsByValue = new ConcurrentHashMap<>();

		final Map<String, Boolean> threads = new ConcurrentHashMap<>();

		final AtomicInteger deliveries = new AtomicInteger();

		final List<ConsumerRecord<String, String>> deadLetters = new CopyOnWriteArrayList<>();

		void apply(ConsumerRecord<String, String> record) {
			this.byKey.computeIfAbsent(record.key(), (key) -> new AtomicInteger()).incrementAndGet();
			this.threads.put(Thread.currentThread().getName(), true);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PaymentListener {

		private final Effects effects;

		PaymentListener(Effects effects) {
			this.effects = effects;
		}

		@KafkaListener(id = PAYMENTS, topics = PAYMENTS, concurrency = "3")
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = "payment")
		public void onPayment(ConsumerRecord<String, String> record) {
			this.effects.apply(record);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RestartListener {

		private final Effects effects;

		private final Charger charger;

		RestartListener(Effects effects, Charger charger) {
			this.effects = effects;
			this.charger = charger;
		}

		@KafkaListener(id = RESTART, topics = RESTART, concurrency = "3")
		public void onPayment(ConsumerRecord<String, String> record) {
			// deliberately never acknowledged
			this.effects.deliveries.incrementAndGet();
			this.charger.charge(record);
		}

		@Bean
		static Charger charger(Effects effects) {
			return new Charger(effects);
		}

	}

	static class Charger {

		private final Effects effects;

		Charger(Effects effects) {
			this.effects = effects;
		}

		@Idempotent(key = "#record.headers.lastHeader('idempotency-key').value()", workflow = "restart")
		public void charge(ConsumerRecord<String, String> record) {
			this.effects.apply(record);
		}

		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", payload = "#record.value()",
				workflow = "reused")
		public void chargeAmount(ConsumerRecord<String, String> record) {
			this.effects.apply(record);
		}

		// README's Message<?> key on a ConsumerRecord: its Headers are no map, so the
		// index fails on every record; the start cannot tell (headers() exists)
		@Idempotent(key = "#record.headers['idempotency-key']", workflow = WRONG_KEY)
		public void chargeWrongKey(ConsumerRecord<String, String> record) {
			this.effects.apply(record);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReusedKeyListener {

		private final Effects effects;

		private final Charger charger;

		ReusedKeyListener(Effects effects, Charger charger) {
			this.effects = effects;
			this.charger = charger;
		}

		@Bean
		static Charger charger(Effects effects) {
			return new Charger(effects);
		}

		@Bean
		DefaultErrorHandler errorHandler(KafkaTemplate<Object, Object> template) {
			// five retries for anything retryable: a not-retryable exception must skip them
			return new DefaultErrorHandler(new DeadLetterPublishingRecoverer(template), new FixedBackOff(0, 5));
		}

		@KafkaListener(id = REUSED, topics = REUSED)
		public void onPayment(ConsumerRecord<String, String> record) {
			this.effects.attemptsByValue.computeIfAbsent(record.value(), (value) -> new AtomicInteger())
				.incrementAndGet();
			this.charger.chargeAmount(record);
		}

		@KafkaListener(id = "reused-dlt", topics = DEAD_LETTERS)
		public void onDeadLetter(ConsumerRecord<String, String> record) {
			this.effects.deadLetters.add(record);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WrongKeyListener {

		private final Effects effects;

		private final Charger charger;

		WrongKeyListener(Effects effects, Charger charger) {
			this.effects = effects;
			this.charger = charger;
		}

		@Bean
		static Charger charger(Effects effects) {
			return new Charger(effects);
		}

		@Bean
		DefaultErrorHandler errorHandler(KafkaTemplate<Object, Object> template) {
			// five retries for anything retryable: a key that cannot be evaluated must skip them
			return new DefaultErrorHandler(new DeadLetterPublishingRecoverer(template), new FixedBackOff(0, 5));
		}

		@KafkaListener(id = WRONG_KEY, topics = WRONG_KEY)
		public void onPayment(ConsumerRecord<String, String> record) {
			this.effects.attemptsByValue.computeIfAbsent(record.value(), (value) -> new AtomicInteger())
				.incrementAndGet();
			this.charger.chargeWrongKey(record);
		}

		@KafkaListener(id = "wrong-key-dlt", topics = WRONG_KEY_DEAD_LETTERS)
		public void onDeadLetter(ConsumerRecord<String, String> record) {
			this.effects.deadLetters.add(record);
		}

	}

}
