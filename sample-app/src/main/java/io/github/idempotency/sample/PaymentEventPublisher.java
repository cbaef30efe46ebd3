package io.github.idempotency.sample;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.ProducerRecord;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.stereotype.Component;

/**
 * At start, publishes a burst of payment events with duplicates, as redeliveries and
 * producer retries make them: {@code sample.events} events of which
 * {@code sample.duplicates} repeat an earlier payment on another partition.
 */
@Component
public class PaymentEventPublisher implements ApplicationRunner {

	private static final Log logger = LogFactory.getLog(PaymentEventPublisher.class);

	private final KafkaTemplate<String, String> kafka;

	private final PaymentSummary summary;

	private final SampleProperties properties;

	private final KafkaListenerEndpointRegistry listeners;

	public PaymentEventPublisher(KafkaTemplate<String, String> kafka, PaymentSummary summary,
			SampleProperties properties, KafkaListenerEndpointRegistry listeners) {
		this.kafka = kafka;
		this.listeners = listeners;
		this.summary = summary;
		this.properties = properties;
	}

	@Override
	public void run(ApplicationArguments args) throws InterruptedException {
		awaitConsumers();
		int events = this.properties.events();
		int duplicates = this.properties.duplicates();
		int unique = events - duplicates;
		for (int i = 0; i < events; i++) {
			// the last 'duplicates' events repeat earlier payments, spread over the partitions
			int payment = (i < unique) ? i : ((i - unique) * 3) % unique;
			String paymentId = "pay-" + payment;
			ProducerRecord<String, String> record = new ProducerRecord<>(PaymentConsumer.TOPIC, i % 3, paymentId,
					Long.toString(1000L + payment));
			record.headers().add(PaymentConsumer.KEY_HEADER, paymentId.getBytes(StandardCharsets.UTF_8));
			this.kafka.send(record);
		}
		this.kafka.flush();
		logger.info("Published " + events + " payment events");
		this.summary.expect(events, duplicates);
	}

	/**
	 * Waits (up to 30 seconds) until every consumer thread owns a partition, so the burst
	 * is not consumed during the group's first rebalances.
	 */
	private void awaitConsumers() throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!consumersAssigned() && System.nanoTime() < deadline) {
			Thread.sleep(100);
		}
	}

	private boolean consumersAssigned() {
		return this.listeners.getListenerContainers()
			.stream()
			.flatMap((container) -> (container instanceof ConcurrentMessageListenerContainer<?, ?> concurrent)
					? concurrent.getContainers().stream() : Stream.of(container))
			.allMatch((container) -> {
				Collection<?> partitions = container.getAssignedPartitions();
				return partitions != null && !partitions.isEmpty();
			});
	}

	/**
	 * Size of the burst.
	 *
	 * @param events how many events to publish
	 * @param duplicates how many of them repeat an earlier payment
	 */
	@ConfigurationProperties("sample")
	public record SampleProperties(int events, int duplicates) {
	}

}
