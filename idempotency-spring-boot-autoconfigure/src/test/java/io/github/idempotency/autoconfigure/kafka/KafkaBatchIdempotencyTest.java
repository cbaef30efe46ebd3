package io.github.idempotency.autoconfigure.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.BatchListenerFailedException;
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
 * {@code @Idempotent(batch = ...)} on batch {@code @KafkaListener} methods, on an
 * in-process KRaft broker with three partitions per topic.
 */
@EmbeddedKafka(partitions = 3, topics = { KafkaBatchIdempotencyTest.PAYMENTS, KafkaBatchIdempotencyTest.FAILING })
class KafkaBatchIdempotencyTest {

	static final String PAYMENTS = "batch-payments";

	static final String FAILING = "batch-failing";

	private static final Duration TIMEOUT = Duration.ofSeconds(90);

	private final ApplicationContextRunner runner = KafkaTests.runner()
		.withBean(Effects.class, Effects::new);

	@Test
	void duplicatesSpreadOverPartitionsAndBatchesHaveOneEffectEach() {
		int unique = 3750;
		int duplicates = 1250;
		this.runner.withUserConfiguration(PaymentListener.class).run((context) -> {
			KafkaTemplate<String, String> template = template(context);
			for (int i = 0; i < unique + duplicates; i++) {
				// one record in four repeats an earlier key, on another partition and in another batch
				String key = "k-" + ((i < unique) ? i : (i * 7) % unique);
				template.send(record(PAYMENTS, i % 3, key, "100"));
			}
			template.flush();
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> requests(context, "batch-payment", "hit") == duplicates);
			assertThat(effects.byKey).hasSize(unique).allSatisfy((key, count) -> assertThat(count).hasValue(1));
			assertThat(requests(context, "batch-payment", "miss")).isEqualTo(unique);
			assertThat(effects.batches.get()).as("the records came in batches").isLessThan(unique);
		});
	}

	@Test
	void aRecordFailingInTheMiddleOfABatchIsRecoveredAndNoOtherRunsTwiceOrIsLost() {
		this.runner.withUserConfiguration(FailingListener.class).run((context) -> {
			KafkaTemplate<String, String> template = template(context);
			// one partition: the first batch holds duplicates before the failing record, so the
			// index the method reports differs from the record's position in the batch
			for (int i = 0; i < 10; i++) {
				template.send(record(FAILING, 0, "f-" + i, "100"));
			}
			for (int i = 0; i < 5; i++) {
				template.send(record(FAILING, 0, "f-" + i, "100"));
			}
			template.send(record(FAILING, 0, "poison", "100"));
			for (int i = 0; i < 4; i++) {
				template.send(record(FAILING, 0, "g-" + i, "100"));
			}
			template.flush();
			context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer(FAILING).start();
			Effects effects = context.getBean(Effects.class);
			await().atMost(TIMEOUT).until(() -> effects.recovered.size() == 1 && effects.byKey.size() == 14);
			assertThat(effects.recovered).singleElement()
				.satisfies((recovered) -> assertThat(recovered.key()).isEqualTo("poison"));
			assertThat(effects.byKey).doesNotContainKey("poison")
				.allSatisfy((key, count) -> assertThat(count).hasValue(1));
		});
	}

	static class Effects {

		final Map<String, AtomicInteger> byKey = new ConcurrentHashMap<>();

		final AtomicInteger batches = new AtomicInteger();

		final List<ConsumerRecord<?, ?>> recovered = new CopyOnWriteArrayList<>();

		void apply(ConsumerRecord<String, String> record) {
			this.byKey.computeIfAbsent(record.key(), (key) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PaymentListener {

		private final Effects effects;

		PaymentListener(Effects effects) {
			this.effects = effects;
		}

		@KafkaListener(id = PAYMENTS, topics = PAYMENTS, concurrency = "3", batch = "true")
		@Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", workflow = "batch-payment")
		public void onPayments(List<ConsumerRecord<String, String>> records) {
			this.effects.batches.incrementAndGet();
			records.forEach(this.effects::apply);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingListener {

		private final Effects effects;

		FailingListener(Effects effects) {
			this.effects = effects;
		}

		@Bean
		DefaultErrorHandler errorHandler() {
			return new DefaultErrorHandler((record, ex) -> this.effects.recovered.add(record), new FixedBackOff(0, 2));
		}

		@KafkaListener(id = FAILING, topics = FAILING, batch = "true", autoStartup = "false")
		@Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", workflow = "batch-failing")
		public void onPayments(List<ConsumerRecord<String, String>> records) {
			for (int i = 0; i < records.size(); i++) {
				ConsumerRecord<String, String> record = records.get(i);
				if ("poison".equals(record.key())) {
					throw new BatchListenerFailedException("poison", new IllegalStateException("cannot charge"), i);
				}
				this.effects.apply(record);
			}
		}

	}

}
