package io.github.idempotency.autoconfigure.kafka;

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
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyKafkaAutoConfiguration;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.support.converter.JacksonJsonMessageConverter;
import org.springframework.kafka.test.condition.EmbeddedKafkaCondition;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.messaging.Message;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.backoff.FixedBackOff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * README's Kafka snippets, as written: the headline listener on Spring's {@code Message}
 * (section at the top), the {@code @Transactional} listener on a {@code ConsumerRecord}
 * and the error handler with a {@code DeadLetterPublishingRecoverer} (section "Brokers /
 * Kafka"). This class has its own in-process broker, so the topic is README's
 * {@code payments}; each test reads only what it sends.
 */
@EmbeddedKafka(partitions = 1, topics = { "payments", "payments-dlt" })
class KafkaReadmeListenersTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyKafkaAutoConfiguration.class,
				KafkaAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean(Effects.class, Effects::new)
		.withPropertyValues("spring.kafka.bootstrap-servers=" + EmbeddedKafkaCondition.getBroker().getBrokersAsString(),
				"spring.kafka.consumer.group-id=" + UUID.randomUUID(),
				"spring.kafka.consumer.auto-offset-reset=latest");

	private final String prefix = UUID.randomUUID().toString();

	@Test
	void theHeadlineListenerRunsAKeyOnceAndDeadLettersAMissingKeyAtOnce() {
		this.runner.withPropertyValues("idempotency.backend=memory")
			.withUserConfiguration(HeadlineListener.class, DeadLetters.class)
			.run((context) -> {
				awaitAssignment(context);
				String key = this.prefix + "-h";
				send(context, key, key);
				send(context, key, key);
				send(context, null, this.prefix + "-no-key");
				Effects effects = context.getBean(Effects.class);
				await().atMost(TIMEOUT).until(() -> requests(context, "hit") == 1 && effects.deadLetters.size() == 1);
				assertThat(effects.byKey).containsOnlyKeys(key);
				assertThat(effects.byKey.get(key)).hasValue(1);
				ConsumerRecord<String, String> deadLetter = effects.deadLetters.get(0);
				assertThat(deadLetter.value()).contains(this.prefix + "-no-key");
				assertThat(new String(deadLetter.headers().lastHeader("kafka_dlt-exception-cause-fqcn").value(),
						StandardCharsets.UTF_8))
					.isEqualTo(MissingIdempotencyKeyException.class.getName());
				assertThat(requests(context, "invalid_key")).as("delivered once").isOne();
			});
	}

	@Test
	void theTransactionalRecordListenerCommitsItsRecordAndAnswersADuplicate() {
		this.runner
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + this.prefix)
			.withUserConfiguration(RecordListener.class)
			.run((context) -> {
				awaitAssignment(context);
				String key = this.prefix + "-r";
				send(context, key, key);
				send(context, key, key);
				Effects effects = context.getBean(Effects.class);
				await().atMost(TIMEOUT).until(() -> requests(context, "hit") == 1);
				assertThat(effects.byKey.get(key)).hasValue(1);
				assertThat(effects.transactional).containsOnly(true);
				assertThat(context.getBean(IdempotencyStore.class).backend()).isEqualTo("jdbc");
				assertThat(context.getBean(IdempotencyStore.class).find(new RecordId("payment", key)))
					.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			});
	}

	private static void awaitAssignment(ApplicationContext context) {
		await().atMost(TIMEOUT)
			.until(() -> context.getBean(KafkaListenerEndpointRegistry.class)
				.getListenerContainers()
				.stream()
				.flatMap((container) -> ((ConcurrentMessageListenerContainer<?, ?>) container).getContainers().stream())
				.map(MessageListenerContainer::getAssignedPartitions)
				.allMatch((partitions) -> partitions != null && !partitions.isEmpty()));
	}

	@SuppressWarnings("unchecked")
	private static void send(ApplicationContext context, String key, String paymentId) {
		RecordHeaders headers = new RecordHeaders();
		if (key != null) {
			headers.add("idempotency-key", key.getBytes(StandardCharsets.UTF_8));
		}
		String json = "{\"paymentId\":\"" + paymentId + "\",\"amount\":100}";
		KafkaTemplate<String, String> template = context.getBean(KafkaTemplate.class);
		template.send(new ProducerRecord<>("payments", null, paymentId, json, headers));
		template.flush();
	}

	private static double requests(ApplicationContext context, String outcome) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_WORKFLOW, "payment", IdempotencyMeters.TAG_OUTCOME, outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	record PaymentRequested(String paymentId, long amount) {
	}

	static class Effects {

		final Map<String, AtomicInteger> byKey = new ConcurrentHashMap<>();

		final List<Boolean> transactional = new CopyOnWriteArrayList<>();

		final List<ConsumerRecord<String, String>> deadLetters = new CopyOnWriteArrayList<>();

		void apply(String key) {
			this.byKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class HeadlineListener {

		private final Effects effects;

		HeadlineListener(Effects effects) {
			this.effects = effects;
		}

		@Bean
		JacksonJsonMessageConverter messageConverter() {
			// a JSON payload as PaymentRequested: Boot hands this converter to the listeners
			return new JacksonJsonMessageConverter();
		}

		// README, the first snippet
		@KafkaListener(topics = "payments")
		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
		public void onPayment(Message<PaymentRequested> msg) {
			this.effects.apply(msg.getPayload().paymentId());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DeadLetters {

		private final Effects effects;

		DeadLetters(Effects effects) {
			this.effects = effects;
		}

		// README, "Brokers / Kafka"
		@Bean
		DefaultErrorHandler errorHandler(KafkaTemplate<Object, Object> template) {
			DefaultErrorHandler handler = new DefaultErrorHandler(new DeadLetterPublishingRecoverer(template), new FixedBackOff(1000, 9));
			handler.setCommitRecovered(true);   // with MANUAL_IMMEDIATE, else a recovered record comes back after a restart
			return handler;
		}

		@KafkaListener(topics = "payments-dlt")
		public void onDeadLetter(ConsumerRecord<String, String> record) {
			this.effects.deadLetters.add(record);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RecordListener {

		private final Effects effects;

		RecordListener(Effects effects) {
			this.effects = effects;
		}

		// README, "Brokers / Kafka"
		@KafkaListener(topics = "payments")
		@Transactional
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", payload = "#record.value()",
				workflow = "payment")
		public void onPayment(ConsumerRecord<String, String> record) {
			this.effects.transactional
				.add(org.springframework.transaction.support.TransactionSynchronizationManager
					.isActualTransactionActive());
			this.effects.apply(record.key());
		}

	}

}
