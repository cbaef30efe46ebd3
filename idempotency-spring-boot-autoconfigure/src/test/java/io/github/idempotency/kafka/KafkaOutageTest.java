package io.github.idempotency.kafka;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.PostgresOutage;
import io.github.idempotency.testservers.RedisOutage;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.test.context.EmbeddedKafka;

import static io.github.idempotency.kafka.KafkaTests.awaitAssignment;
import static io.github.idempotency.kafka.KafkaTests.container;
import static io.github.idempotency.kafka.KafkaTests.record;
import static io.github.idempotency.kafka.KafkaTests.template;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @KafkaListener} whose store goes away after the claim and before the result, on
 * the in-process broker: a private redis-server that keeps its writes across a stop, or a
 * private PostgreSQL server that crashes. The listener's thread stores the result once the
 * store is back, so the broker does not redeliver and the payment is charged once.
 */
@EmbeddedKafka(partitions = 1, topics = KafkaOutageTest.CHARGES)
class KafkaOutageTest {

	static final String CHARGES = "charges-outage";

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	@Test
	void aResultNotStoredWhileRedisIsDownIsStoredByTheListenerOnceRedisIsBack() throws Exception {
		try (RedisOutage outage = new RedisOutage()) {
			chargeOnceThroughAnOutage(KafkaTests.runner()
				.withBean(RedisConnectionFactory.class, outage::connectionFactory)
				.withBean(Charges.class, () -> new Charges(outage::begin))
				.withPropertyValues("idempotency.backend=redis"));
		}
	}

	@Test
	void aResultNotStoredWhilePostgresIsDownIsStoredByTheListenerOnceItIsBack() throws Exception {
		try (PostgresOutage outage = new PostgresOutage()) {
			chargeOnceThroughAnOutage(KafkaTests.runner()
				.withBean(DataSource.class, outage::dataSource)
				.withBean(Charges.class, () -> new Charges(outage::begin))
				.withPropertyValues("idempotency.backend=jdbc", "idempotency.jdbc.initialize-schema=always"));
		}
	}

	/**
	 * Sends a charge whose listener begins the outage, waits until its result is stored,
	 * then sends it again: answered from the record, charged once.
	 */
	private static void chargeOnceThroughAnOutage(ApplicationContextRunner runner) {
		runner.withUserConfiguration(ChargeListener.class)
			// a short lease: without the retries the redelivery would take the key over after it
			.withPropertyValues("idempotency.lease-ttl=10s", "idempotency.on-in-progress=wait",
					"idempotency.wait-timeout=30s")
			.run((context) -> {
				awaitAssignment(container(context, CHARGES), TIMEOUT);
				Charges charges = context.getBean(Charges.class);
				charges.context = context;
				template(context).send(record(CHARGES, 0, "c-1", "100"));
				template(context).flush();
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				await().atMost(TIMEOUT)
					.ignoreExceptions()
					.until(() -> store.find(new RecordId("charge", "c-1"))
						.filter((record) -> record.status() == RecordStatus.COMPLETED)
						.isPresent());
				assertThat(failedCompletions(context)).isPositive();
				// a redelivery now is answered from the record
				template(context).send(record(CHARGES, 0, "c-1", "100"));
				template(context).flush();
				await().atMost(TIMEOUT).until(() -> KafkaTests.requests(context, "charge", "hit") == 1);
				assertThat(charges.count).hasValue(1);
			});
	}

	static double failedCompletions(ApplicationContext context) {
		Timer timer = context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.STORE)
			.tags("operation", "complete", "result", "error")
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

	/**
	 * Counts the charges; the store goes away during the first and comes back once a
	 * completion failed.
	 */
	static class Charges {

		final Consumer<BooleanSupplier> outage;

		final AtomicInteger count = new AtomicInteger();

		volatile ApplicationContext context;

		/**
		 * @param outage begins an outage that lasts until its argument holds
		 */
		Charges(Consumer<BooleanSupplier> outage) {
			this.outage = outage;
		}

		void charge() {
			if (this.count.incrementAndGet() == 1) {
				this.outage.accept(() -> failedCompletions(this.context) > 0);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ChargeListener {

		private final Charges charges;

		ChargeListener(Charges charges) {
			this.charges = charges;
		}

		@KafkaListener(id = CHARGES, topics = CHARGES)
		@Idempotent(key = "#record.headers.lastHeader('idempotency-key')", workflow = "charge")
		public void onCharge(ConsumerRecord<String, String> record) {
			this.charges.charge();
		}

	}

}
