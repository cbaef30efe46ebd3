package io.github.idempotency.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyRabbitAutoConfiguration;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.RedisOutage;
import io.github.idempotency.testservers.TestServers;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @RabbitListener} on the Redis store whose Redis goes away after the claim and
 * before the result, on the real RabbitMQ and a private redis-server that keeps its writes
 * across a stop: the listener's thread stores the result once Redis is back, so the message
 * is not requeued into a second charge.
 */
class RabbitRedisOutageTest {

	private static final String KEY_HEADER = "idempotency-key";

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final String queue = "idempotency-outage-" + UUID.randomUUID();

	private final RedisOutage outage = new RedisOutage();

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final AtomicInteger charges = new AtomicInteger();

	@AfterEach
	void stop() throws InterruptedException {
		this.outage.close();
	}

	@Test
	void aResultNotStoredWhileRedisIsDownIsStoredByTheListenerOnceRedisIsBack() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
					IdempotencyAutoConfiguration.class, IdempotencyRabbitAutoConfiguration.class,
					RabbitAutoConfiguration.class))
			.withBean(MeterRegistry.class, () -> this.registry)
			.withBean(RedisConnectionFactory.class, this.outage::connectionFactory)
			.withBean("chargeQueueName", String.class, () -> this.queue)
			.withBean(Charger.class, () -> new Charger(this.charges,
					() -> this.outage.begin(() -> failedCompletions(this.registry) > 0)))
			.withUserConfiguration(ChargeListener.class)
			// a short lease: without the retries the requeued message would take the key over after it
			.withPropertyValues("idempotency.backend=redis", "idempotency.lease-ttl=10s",
					"idempotency.on-in-progress=wait", "idempotency.wait-timeout=30s",
					"spring.rabbitmq.addresses=" + TestServers.rabbitMqUrl())
			.run((context) -> {
				send(context, "c-1");
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				await().atMost(TIMEOUT)
					.ignoreExceptions()
					.until(() -> store.find(new RecordId("rabbit-charge", "c-1"))
						.filter((record) -> record.status() == RecordStatus.COMPLETED)
						.isPresent());
				assertThat(failedCompletions(this.registry)).isPositive();
				// a redelivery now is answered from the record
				send(context, "c-1");
				await().atMost(TIMEOUT).until(() -> hits(this.registry) == 1);
				assertThat(this.charges).hasValue(1);
			});
	}

	private void send(ApplicationContext context, String key) {
		Message message = MessageBuilder.withBody("100".getBytes(StandardCharsets.UTF_8))
			.setHeader(KEY_HEADER, key)
			.build();
		context.getBean(RabbitTemplate.class).send("", this.queue, message);
	}

	private static double failedCompletions(MeterRegistry registry) {
		Timer timer = registry.find(IdempotencyMeters.STORE)
			.tags("operation", "complete", "result", "error")
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

	private static double hits(MeterRegistry registry) {
		Counter counter = registry.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_OUTCOME, "hit")
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Configuration(proxyBeanMethods = false)
	static class ChargeListener {

		private final Charger charger;

		ChargeListener(Charger charger) {
			this.charger = charger;
		}

		@Bean
		Queue chargeQueue(String chargeQueueName) {
			return QueueBuilder.nonDurable(chargeQueueName).expires(60_000).build();
		}

		@RabbitListener(queues = "#{@chargeQueueName}")
		void onCharge(Message message) {
			this.charger.charge(message.getMessageProperties().getHeader(KEY_HEADER));
		}

	}

	/**
	 * Counts the charges; the first one begins the Redis outage.
	 */
	static class Charger {

		private final AtomicInteger count;

		private final Runnable outage;

		Charger(AtomicInteger count, Runnable outage) {
			this.count = count;
			this.outage = outage;
		}

		@Idempotent(key = "#key", workflow = "rabbit-charge")
		public void charge(String key) {
			if (this.count.incrementAndGet() == 1) {
				this.outage.run();
			}
		}

	}

}
