package io.github.idempotency.autoconfigure.javadoc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import io.r2dbc.spi.ConnectionFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.amqp.IdempotencyFatalExceptionStrategy;
import io.github.idempotency.kafka.IdempotencyKafkaErrors;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.test.ReactiveIdempotencyStoreContract;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.messaging.Message;

/**
 * The code samples of the published modules' javadoc, compiled: each line of a
 * {@code <pre class="code">} block is a line here ({@link JavadocSamplesTest} checks it),
 * so a sample that stops compiling fails the build.
 */
@SuppressWarnings("unused")
class JavadocSamples {

	private final Payments payments = new Payments();

	// Idempotent

	@KafkaListener(topics = "payments")
	@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
	public Receipt onPayment(Message<PaymentRequested> msg) {
		return new Receipt();
	}

	@KafkaListener(topics = "payments", batch = "true")
	@Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", workflow = "payment")
	public void onPayments(List<ConsumerRecord<String, Payment>> records) {
	}

	// IdempotencyTemplate

	Receipt template(IdempotencyTemplate template, String key, PaymentRequested request) {
		Receipt receipt = template.execute(IdempotentRequest.of("payment", key), Receipt.class,
				() -> payments.charge(request));
		return receipt;
	}

	// IdempotencyContext

	void context(Order order) {
		IdempotencyContext ctx = IdempotencyContext.current();
		if (ctx.recoveryPoint().isEmpty()) {
			reserveStock(order);
			ctx.saveRecoveryPoint("stock-reserved");
		}
		chargeCard(order);
	}

	// IdempotentRequest

	IdempotentRequest request(Message<Payment> message) {
		IdempotentRequest request = IdempotentRequest.of("payment", message.getHeaders().get("idempotency-key"))
			.withPayload(message.getPayload())
			.withRecordFailureFor(CardDeclinedException.class);
		return request;
	}

	// IdempotencyKafkaErrors, IdempotencyFatalExceptionStrategy

	void kafka(DefaultErrorHandler errorHandler) {
		IdempotencyKafkaErrors.classify(errorHandler);
	}

	void rabbit(SimpleRabbitListenerContainerFactory factory) {
		factory.setErrorHandler(IdempotencyFatalExceptionStrategy.errorHandler());
	}

	// IdempotencyStoreContract

	abstract static class PostgresJdbcIdempotencyStoreTest extends IdempotencyStoreContract {
		DataSource dataSource;
		@Override
		protected IdempotencyStore createStore(Clock clock) {
			return new JdbcIdempotencyStore(dataSource, "idempotency_record", Duration.ofSeconds(5), clock);
		}
	}

	// ReactiveIdempotencyStoreContract

	abstract static class PostgresR2dbcIdempotencyStoreTest extends ReactiveIdempotencyStoreContract {
		ConnectionFactory connectionFactory;
		@Override
		protected ReactiveIdempotencyStore createReactiveStore(Clock clock) {
			return new R2dbcIdempotencyStore(connectionFactory, "idempotency_record", Duration.ofSeconds(5), clock);
		}
	}

	private void reserveStock(Order order) {
	}

	private void chargeCard(Order order) {
	}

	static class Payments {

		Receipt charge(PaymentRequested request) {
			return new Receipt();
		}

	}

	record Receipt() {
	}

	record Order() {
	}

	record Payment() {
	}

	record PaymentRequested() {
	}

	static class CardDeclinedException extends RuntimeException {

	}

}
