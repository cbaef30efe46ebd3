package io.github.idempotency.autoconfigure.aop;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's Java snippets of "Crash recovery" and "The programmatic template", as written
 * (bodies of {@code ...} filled in). The other snippets run elsewhere: the quick start's
 * service in {@code FirstHourTest}, the Kafka listeners and error handler in
 * {@code KafkaReadmeListenersTest}, the RabbitMQ listeners and queues in
 * {@code RabbitListenerTrapsTest}, and "Writing your own store" is the shape of every
 * store's test ({@code MemoryIdempotencyStoreTest}).
 */
class ReadmeSnippetsTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory")
		.withBean(Stock.class)
		.withBean(Shipping.class)
		.withBean(Fulfilment.class)
		.withBean(Payments.class)
		.withBean(Checkout.class);

	@Test
	void crashRecoveryRunsTheStepsAFirstAttemptHasNotSaved() {
		this.runner.run((context) -> {
			Fulfilment fulfilment = context.getBean(Fulfilment.class);
			Stock stock = context.getBean(Stock.class);
			Shipping shipping = context.getBean(Shipping.class);

			fulfilment.fulfil(new Order("o-1"));
			assertThat(stock.reserved).containsExactly("o-1");
			assertThat(shipping.booked).containsExactly("o-1");
			assertThat(shipping.attempts).containsExactly(1);

			// a run that reserved the stock, saved its recovery point and crashed: its lease runs out
			ClaimHandle crashed = context.getBean(IdempotencyStore.class)
				.claim(new ClaimRequest(new RecordId("fulfilment", "o-2"), "crashed", null, Duration.ofMillis(200),
						Duration.ofDays(1)))
				.acquiredHandle();
			crashed.saveRecoveryPoint("stock-reserved");
			fulfilment.fulfil(new Order("o-2"));
			assertThat(stock.reserved).containsExactly("o-1");
			assertThat(shipping.booked).containsExactly("o-1", "o-2");
			assertThat(shipping.attempts).containsExactly(1, 2);
		});
	}

	@Test
	void theTemplateRunsAKeyOnce() {
		this.runner.run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			Receipt first = checkout.pay("t-1", new PaymentRequest("t-1", 100));
			Receipt second = checkout.pay("t-1", new PaymentRequest("t-1", 100));
			assertThat(second).isEqualTo(first);
			assertThat(context.getBean(Payments.class).charges).hasValue(1);
		});
	}

	record Order(String id) {
	}

	record PaymentRequest(String id, long amount) {
	}

	record Receipt(String paymentId, long amount, int sequence) {
	}

	static class Stock {

		final List<String> reserved = new CopyOnWriteArrayList<>();

		void reserve(Order order) {
			this.reserved.add(order.id());
		}

	}

	static class Shipping {

		final List<String> booked = new CopyOnWriteArrayList<>();

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		void book(Order order) {
			this.booked.add(order.id());
			this.attempts.add(IdempotencyContext.current().attempt());
		}

	}

	static class Fulfilment {

		private final Stock stock;

		private final Shipping shipping;

		Fulfilment(Stock stock, Shipping shipping) {
			this.stock = stock;
			this.shipping = shipping;
		}

		// README, "Crash recovery"
		@Idempotent(key = "#order.id", workflow = "fulfilment")
		public void fulfil(Order order) {
			IdempotencyContext ctx = IdempotencyContext.current();
			if (ctx.recoveryPoint().isEmpty()) {
				stock.reserve(order);
				ctx.saveRecoveryPoint("stock-reserved");   // durable at once, renews the lease
			}
			shipping.book(order);
		}

	}

	static class Payments {

		final AtomicInteger charges = new AtomicInteger();

		Receipt charge(PaymentRequest request) {
			return new Receipt(request.id(), request.amount(), this.charges.incrementAndGet());
		}

	}

	static class Checkout {

		private final IdempotencyTemplate idempotencyTemplate;

		private final Payments payments;

		Checkout(IdempotencyTemplate idempotencyTemplate, Payments payments) {
			this.idempotencyTemplate = idempotencyTemplate;
			this.payments = payments;
		}

		Receipt pay(String key, PaymentRequest request) {
			// README, "The programmatic template"
			Receipt receipt = idempotencyTemplate.execute(
					IdempotentRequest.of("payment", key).withPayload(request),
					Receipt.class, () -> payments.charge(request));
			return receipt;
		}

	}

}
