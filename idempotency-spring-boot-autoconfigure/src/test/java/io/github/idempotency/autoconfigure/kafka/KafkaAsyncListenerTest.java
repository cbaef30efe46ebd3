package io.github.idempotency.autoconfigure.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.test.context.EmbeddedKafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An asynchronous {@code @KafkaListener} (it returns a {@code CompletableFuture}) on the
 * in-process broker: a failure that settles after the return is redelivered and runs
 * again; a duplicate completes with the stored result.
 */
@EmbeddedKafka(partitions = 1, topics = KafkaAsyncListenerTest.TOPIC)
class KafkaAsyncListenerTest {

	static final String TOPIC = "async-payments";

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final ApplicationContextRunner runner = KafkaTests.runner().withUserConfiguration(AsyncListener.class);

	@Test
	void aLateFailureIsRedeliveredAndADuplicateCompletesWithTheStoredResult() {
		this.runner.run((context) -> {
			KafkaTemplate<String, String> template = KafkaTests.template(context);
			template.send(record("k-1"));
			template.send(record("fails-once"));
			template.send(record("k-1"));
			template.flush();
			Charges charges = context.getBean(Charges.class);
			await().atMost(TIMEOUT).until(() -> charges.settled().size() == 3);
			assertThat(charges.runs().get("k-1")).hasValue(1);
			assertThat(charges.runs().get("fails-once")).hasValue(2);
			List<String> receipts = charges.settled().stream().filter((receipt) -> receipt.startsWith("k-1:")).toList();
			assertThat(receipts).hasSize(2);
			assertThat(receipts.get(1)).isEqualTo(receipts.get(0));
		});
	}

	private static ProducerRecord<String, String> record(String key) {
		return KafkaTests.record(TOPIC, 0, key, "100");
	}

	/** Proxied by the idempotency advisor: read through its methods. */
	static class Charges {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final List<String> settled = new CopyOnWriteArrayList<>();

		Map<String, AtomicInteger> runs() {
			return this.runs;
		}

		List<String> settled() {
			return this.settled;
		}

		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = "async-payment")
		public CompletableFuture<String> charge(ConsumerRecord<String, String> record) {
			int run = this.runs.computeIfAbsent(record.key(), (key) -> new AtomicInteger()).incrementAndGet();
			return CompletableFuture.supplyAsync(() -> {
				if (record.key().equals("fails-once") && run == 1) {
					throw new IllegalStateException("the card network timed out");
				}
				return record.key() + ":" + UUID.randomUUID();
			});
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AsyncListener {

		private final Charges charges;

		AsyncListener(Charges charges) {
			this.charges = charges;
		}

		@Bean
		static Charges charges() {
			return new Charges();
		}

		@KafkaListener(id = TOPIC, topics = TOPIC)
		public CompletableFuture<String> onPayment(ConsumerRecord<String, String> record) {
			return this.charges.charge(record).whenComplete((receipt, failure) -> {
				if (receipt != null) {
					this.charges.settled().add(receipt);
				}
			});
		}

	}

}
