package io.github.idempotency.kafka;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testsupport.RedisOutage;
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
 * A {@code @KafkaListener} on the Redis store whose Redis goes away after the claim and
 * before the result, on the in-process broker and a private redis-server that keeps its
 * writes across a stop: the listener's thread stores the result once Redis is back, so the
 * broker does not redeliver and the payment is charged once.
 */
@EmbeddedKafka(partitions = 1, topics = KafkaRedisOutageTest.CHARGES)
class KafkaRedisOutageTest {

	static final String CHARGES = "charges-redis-outage";

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final RedisOutage outage = new RedisOutage();

	@AfterEach
	void stop() throws InterruptedException {
		this.outage.close();
	}

	@Test
	void aResultNotStoredWhileRedisIsDownIsStoredByTheListenerOnceRedisIsBack() {
		KafkaTests.runner()
			.withBean(RedisConnectionFactory.class, this.outage::connectionFactory)
			.withBean(Charges.class, () -> new Charges(this.outage))
			.withUserConfiguration(ChargeListener.class)
			// a short lease: without the retries the redelivery would take the key over after it
			.withPropertyValues("idempotency.backend=redis", "idempotency.lease-ttl=10s",
					"idempotency.on-in-progress=wait", "idempotency.wait-timeout=30s")
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
	 * Counts the charges; Redis goes away during the first and comes back once a completion
	 * failed.
	 */
	static class Charges {

		final RedisOutage outage;

		final AtomicInteger count = new AtomicInteger();

		volatile ApplicationContext context;

		Charges(RedisOutage outage) {
			this.outage = outage;
		}

		void charge() {
			if (this.count.incrementAndGet() == 1) {
				this.outage.begin(() -> failedCompletions(this.context) > 0);
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
