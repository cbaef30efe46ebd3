package io.github.idempotency.firsthour;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A new user's application, written from README's snippets only: the quick start's
 * {@link PaymentService} (with the types it names), configured by {@code first-hour.yml}
 * (README's YAML) and, on the {@code redis} profile, {@code first-hour-redis.yml}.
 * Everything else is Spring Boot's auto-configuration of what the class path holds (JPA,
 * Redis, RabbitMQ, Kafka, Actuator and the starter).
 */
@SpringBootApplication
public class FirstHourApplication {

	record PaymentRequest(String id, long amount) {
	}

	record Receipt(String paymentId, long amount, int sequence) {
	}

	static class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

}
