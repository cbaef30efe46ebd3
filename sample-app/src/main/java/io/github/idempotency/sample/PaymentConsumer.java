package io.github.idempotency.sample;

import java.time.Instant;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import io.github.idempotency.Idempotent;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * Charges each payment event once, however often Kafka delivers it: the idempotency key
 * is the event's {@code idempotency-key} header, set by the producer.
 */
@Component
public class PaymentConsumer {

	static final String TOPIC = "payments";

	static final String KEY_HEADER = "idempotency-key";

	private final PaymentRepository payments;

	public PaymentConsumer(PaymentRepository payments) {
		this.payments = payments;
	}

	@KafkaListener(topics = TOPIC, concurrency = "3")
	@Transactional
	@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", payload = "#record.value()",
			workflow = "payment")
	public void onPayment(ConsumerRecord<String, String> record) {
		this.payments.save(new Payment(record.key(), Long.parseLong(record.value()), Instant.now()));
	}

}
