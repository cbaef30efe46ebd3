package io.github.idempotency.autoconfigure.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.kafka.test.condition.EmbeddedKafkaCondition;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.kafka.test.utils.KafkaTestUtils;

import static io.github.idempotency.autoconfigure.kafka.KafkaTests.record;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.requests;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.template;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent @KafkaListener} methods that acknowledge by hand, on an in-process
 * KRaft broker (one partition per topic, so the committed offset tells what was
 * acknowledged): a record the starter answers without running the method is acknowledged
 * all the same, and a record the starter's error handler recovers is committed.
 */
@EmbeddedKafka(partitions = 1,
		topics = { KafkaManualAckTest.MANUAL, KafkaManualAckTest.MANUAL_IMMEDIATE, KafkaManualAckTest.ASYNC_ACKS,
				KafkaManualAckTest.CONSUMER, KafkaManualAckTest.KEYLESS, KafkaManualAckTest.BATCH, KafkaManualAckTest.BATCH_NACK,
				KafkaManualAckTest.RECORD_NACK, KafkaManualAckTest.NO_ACK })
class KafkaManualAckTest {

	static final String MANUAL = "ack-manual";

	static final String MANUAL_IMMEDIATE = "ack-manual-immediate";

	static final String ASYNC_ACKS = "ack-async-acks";

	static final String KEYLESS = "ack-keyless";

	static final String BATCH = "ack-batch";

	static final String BATCH_NACK = "ack-batch-nack";

	static final String RECORD_NACK = "ack-record-nack";

	static final String NO_ACK = "ack-none";

	static final String CONSUMER = "ack-consumer";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = KafkaTests.runner().withBean(Effects.class, Effects::new);

	/** Read here: Awaitility polls on another thread, which does not see the test's broker. */
	private final String brokers = EmbeddedKafkaCondition.getBroker().getBrokersAsString();

	@Test
	void manualADuplicateAsTheLastRecordOfAPartitionIsCommitted() {
		duplicateAsTheLastRecordIsCommitted(MANUAL, "manual");
	}

	@Test
	void manualImmediateADuplicateAsTheLastRecordOfAPartitionIsCommitted() {
		duplicateAsTheLastRecordIsCommitted(MANUAL_IMMEDIATE, "manual_immediate");
	}

	private void duplicateAsTheLastRecordIsCommitted(String topic, String ackMode) {
		this.runner.withUserConfiguration(RecordListener.class)
			.withPropertyValues("ack.topic=" + topic, "spring.kafka.listener.ack-mode=" + ackMode)
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				template.send(record(topic, 0, "k-1", "100"));
				template.send(record(topic, 0, "k-2", "100"));
				template.send(record(topic, 0, "k-1", "100"));
				template.flush();
				await().atMost(TIMEOUT).until(() -> requests(context, topic, "hit") == 1);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(topic)).isEqualTo(3));
				assertChargedOnce(context, "k-1", "k-2");
			});
	}

	@Test
	void aListenerThatCommitsThroughItsConsumerHasADuplicateLastRecordCommitted() {
		this.runner.withUserConfiguration(ConsumerListener.class)
			.withPropertyValues("spring.kafka.listener.ack-mode=manual")
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				template.send(record(CONSUMER, 0, "c-1", "100"));
				template.send(record(CONSUMER, 0, "c-2", "100"));
				template.send(record(CONSUMER, 0, "c-1", "100"));
				template.flush();
				await().atMost(TIMEOUT).until(() -> requests(context, CONSUMER, "hit") == 1);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(CONSUMER)).isEqualTo(3));
				assertChargedOnce(context, "c-1", "c-2");
			});
	}

	@Test
	void manualWithAsyncAcksKeepsConsumingAfterADuplicate() {
		this.runner.withUserConfiguration(RecordListener.class)
			.withPropertyValues("ack.topic=" + ASYNC_ACKS, "spring.kafka.listener.ack-mode=manual",
					"spring.kafka.listener.async-acks=true")
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				template.send(record(ASYNC_ACKS, 0, "a-1", "100"));
				template.send(record(ASYNC_ACKS, 0, "a-1", "100"));
				template.flush();
				await().atMost(TIMEOUT).until(() -> requests(context, ASYNC_ACKS, "hit") == 1);
				// later records, in later polls: a consumer paused for the duplicate's ack would never get them
				for (int i = 2; i <= 6; i++) {
					template.send(record(ASYNC_ACKS, 0, "a-" + i, "100"));
				}
				template.flush();
				await().atMost(TIMEOUT).until(() -> context.getBean(Effects.class).byKey.size() == 6);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(ASYNC_ACKS)).isEqualTo(7));
				assertChargedOnce(context, "a-1", "a-2", "a-3", "a-4", "a-5", "a-6");
			});
	}

	@Test
	void manualImmediateARecordWithoutKeyRecoveredByTheStartersErrorHandlerIsCommitted() {
		this.runner.withUserConfiguration(RecordListener.class)
			.withPropertyValues("ack.topic=" + KEYLESS, "spring.kafka.listener.ack-mode=manual_immediate")
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				template.send(record(KEYLESS, 0, "n-1", "100"));
				template.send(new ProducerRecord<>(KEYLESS, 0, "no-key", "100"));
				template.flush();
				await().atMost(TIMEOUT).until(() -> requests(context, KEYLESS, "invalid_key") == 1);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(KEYLESS)).isEqualTo(2));
				assertThat(requests(context, KEYLESS, "invalid_key")).as("recovered once, not retried").isOne();
				assertChargedOnce(context, "n-1");
			});
	}

	@Test
	void aBatchListenerAcknowledgingByIndexHasItsAnsweredRecordsCommitted() {
		this.runner.withUserConfiguration(BatchListener.class)
			.withPropertyValues("spring.kafka.listener.ack-mode=manual_immediate")
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				for (int i = 0; i < 5; i++) {
					template.send(record(BATCH, 0, "b-" + i, "100"));
				}
				template.flush();
				Effects effects = context.getBean(Effects.class);
				await().atMost(TIMEOUT).until(() -> effects.byKey.size() == 5);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(BATCH)).isEqualTo(5));
				// new records between duplicates, and a duplicate last: the method acknowledges the
				// last index it received, which is not the last of the batch
				template.send(record(BATCH, 0, "b-5", "100"));
				template.send(record(BATCH, 0, "b-0", "100"));
				template.send(record(BATCH, 0, "b-6", "100"));
				template.send(record(BATCH, 0, "b-1", "100"));
				template.flush();
				await().atMost(TIMEOUT).until(() -> requests(context, BATCH, "hit") == 2);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(BATCH)).isEqualTo(9));
				// only duplicates: the method is not called, the batch is acknowledged all the same
				template.send(record(BATCH, 0, "b-2", "100"));
				template.send(record(BATCH, 0, "b-3", "100"));
				template.flush();
				await().atMost(TIMEOUT).until(() -> requests(context, BATCH, "hit") == 4);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(BATCH)).isEqualTo(11));
				assertChargedOnce(context, "b-0", "b-1", "b-2", "b-3", "b-4", "b-5", "b-6");
			});
	}

	@Test
	void aRecordListenerThatNacksHasTheRecordRunWhenRedelivered() {
		this.runner.withUserConfiguration(NackingRecordListener.class)
			.withPropertyValues("spring.kafka.listener.ack-mode=manual_immediate")
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				for (String key : List.of("r-1", "poison", "r-2")) {
					template.send(record(RECORD_NACK, 0, key, "100"));
				}
				template.flush();
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(RECORD_NACK)).isEqualTo(3));
				assertThat(context.getBean(Effects.class).nacked).containsExactly("poison");
				assertChargedOnce(context, "r-1", "poison", "r-2");
			});
	}

	@Test
	void aBatchListenerThatNacksAtAnIndexHasThatRecordAndTheRestRunWhenRedelivered() {
		this.runner.withUserConfiguration(NackingBatchListener.class)
			.withPropertyValues("spring.kafka.listener.ack-mode=manual_immediate")
			.run((context) -> {
				KafkaTemplate<String, String> template = template(context);
				template.send(record(BATCH_NACK, 0, "n-0", "100"));
				template.flush();
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(BATCH_NACK)).isEqualTo(1));
				// held back until all four are there, so that they arrive as one batch
				ConcurrentMessageListenerContainer<?, ?> container = KafkaTests.container(context, BATCH_NACK);
				container.pause();
				await().atMost(TIMEOUT).until(container::isContainerPaused);
				for (String key : List.of("n-0", "n-1", "poison", "n-2")) {
					template.send(record(BATCH_NACK, 0, key, "100"));
				}
				template.flush();
				container.resume();
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(committed(BATCH_NACK)).isEqualTo(5));
				// the duplicate n-0 left out; nacked at poison (index 1 of what the method got),
				// which comes back with n-2, and both run then
				assertThat(context.getBean(Effects.class).batches).containsExactly(List.of("n-0"), List.of("n-1", "poison", "n-2"),
						List.of("poison", "n-2"));
				assertChargedOnce(context, "n-0", "n-1", "poison", "n-2");
			});
	}

	@Test
	void aManualAckListenerWithoutAcknowledgmentFailsTheStart() {
		this.runner.withUserConfiguration(NoAcknowledgmentListener.class)
			.withPropertyValues("spring.kafka.listener.ack-mode=manual")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure())
					.hasMessageContaining("@Idempotent on " + NoAcknowledgmentListener.class.getName() + ".onPayment")
					.hasMessageContaining("acknowledges by hand (AckMode.MANUAL)")
					.hasMessageContaining("add an org.springframework.kafka.support.Acknowledgment parameter");
			});
	}

	private long committed(String topic) throws Exception {
		OffsetAndMetadata offset = KafkaTestUtils.getCurrentOffset(this.brokers, topic, topic, 0);
		return (offset != null) ? offset.offset() : -1;
	}

	private static void assertChargedOnce(ApplicationContext context, String... keys) {
		assertThat(context.getBean(Effects.class).byKey).containsOnlyKeys(keys)
			.allSatisfy((key, count) -> assertThat(count).hasValue(1));
	}

	static class Effects {

		final Map<String, AtomicInteger> byKey = new ConcurrentHashMap<>();

		final List<List<String>> batches = new CopyOnWriteArrayList<>();

		/** The keys a listener asked for again, once each. */
		final Set<String> nacked = ConcurrentHashMap.newKeySet();

		void apply(ConsumerRecord<String, String> record) {
			this.byKey.computeIfAbsent(record.key(), (key) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RecordListener {

		private final Effects effects;

		RecordListener(Effects effects) {
			this.effects = effects;
		}

		/** The listener id is its group: one group per topic. */
		@KafkaListener(id = "${ack.topic}", topics = "${ack.topic}")
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = "${ack.topic}")
		public void onPayment(ConsumerRecord<String, String> record, Acknowledgment ack) {
			this.effects.apply(record);
			ack.acknowledge();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BatchListener {

		private final Effects effects;

		BatchListener(Effects effects) {
			this.effects = effects;
		}

		@KafkaListener(id = BATCH, topics = BATCH, batch = "true")
		@Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", workflow = BATCH)
		public void onPayments(List<ConsumerRecord<String, String>> records, Acknowledgment ack) {
			records.forEach(this.effects::apply);
			ack.acknowledge(records.size() - 1);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NackingRecordListener {

		private final Effects effects;

		NackingRecordListener(Effects effects) {
			this.effects = effects;
		}

		@KafkaListener(id = RECORD_NACK, topics = RECORD_NACK)
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = RECORD_NACK)
		public void onPayment(ConsumerRecord<String, String> record, Acknowledgment ack) {
			if (record.key().equals("poison") && this.effects.nacked.add("poison")) {
				ack.nack(Duration.ofMillis(1));
				return;
			}
			this.effects.apply(record);
			ack.acknowledge();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NackingBatchListener {

		private final Effects effects;

		NackingBatchListener(Effects effects) {
			this.effects = effects;
		}

		@KafkaListener(id = BATCH_NACK, topics = BATCH_NACK, batch = "true")
		@Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", workflow = BATCH_NACK)
		public void onPayments(List<ConsumerRecord<String, String>> records, Acknowledgment ack) {
			this.effects.batches.add(records.stream().map(ConsumerRecord::key).toList());
			for (int i = 0; i < records.size(); i++) {
				if (records.get(i).key().equals("poison") && this.effects.nacked.add("poison")) {
					ack.nack(i, Duration.ofMillis(1));
					return;
				}
				this.effects.apply(records.get(i));
			}
			ack.acknowledge(records.size() - 1);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ConsumerListener {

		private final Effects effects;

		ConsumerListener(Effects effects) {
			this.effects = effects;
		}

		@KafkaListener(id = CONSUMER, topics = CONSUMER)
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = CONSUMER)
		public void onPayment(ConsumerRecord<String, String> record, Consumer<?, ?> consumer) {
			this.effects.apply(record);
			consumer.commitSync(Map.of(new TopicPartition(record.topic(), record.partition()),
					new OffsetAndMetadata(record.offset() + 1)));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoAcknowledgmentListener {

		@KafkaListener(id = NO_ACK, topics = NO_ACK)
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = NO_ACK)
		public void onPayment(ConsumerRecord<String, String> record) {
		}

	}

}
