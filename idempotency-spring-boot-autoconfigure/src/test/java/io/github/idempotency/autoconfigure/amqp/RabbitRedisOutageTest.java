package io.github.idempotency.autoconfigure.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

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
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @RabbitListener} on the Redis store whose Redis goes away, on the real RabbitMQ
 * and a private redis-server that keeps its writes across a stop:
 * <ul>
 * <li>after the claim and before the result: the listener's thread stores the result once
 * Redis is back, so the message is not requeued into a second charge;</li>
 * <li>under a steady stream of messages: the deliveries whose claims fail are requeued
 * after a pause that grows to a second, so the outage costs about one redelivery per
 * second per consumer and a few log lines, not a hot loop, and every message runs once
 * after it.</li>
 * </ul>
 */
@ExtendWith(OutputCaptureExtension.class)
class RabbitRedisOutageTest {

	private static final String KEY_HEADER = "idempotency-key";

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private static final Duration OUTAGE = Duration.ofSeconds(12);

	/**
	 * A log line's level: Logback's own layout ({@code 08:25:16.233 [thread] WARN logger}), or
	 * Spring Boot's once an application of another test set it up
	 * ({@code 2026-11-28T08:25:16.233Z  WARN 4242 --- [thread] logger}).
	 */
	private static final Pattern LOG_LINE = Pattern
		.compile("^\\S+\\s+(?:\\[[^\\]]*\\]\\s+)?(TRACE|DEBUG|INFO|WARN|ERROR)\\b");

	/** Lettuce's and Netty's reconnections, whose logger names Spring Boot abbreviates. */
	private static final Pattern CLIENT = Pattern.compile("lettuce|netty|ConnectionWatchdog|ReconnectionHandler");

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

	/**
	 * Two consumers, a message every 50 ms, and Redis down for 12 s. Measured: deliveries
	 * per second per consumer from 3 s into the outage until its end (at most 1.5, about one
	 * per second; without the back-off, hundreds), the log lines written during the outage
	 * by the listener's side (at most 100; without the back-off, a stack trace per
	 * delivery), every message run exactly once, and the first run within 5 s of Redis's
	 * return.
	 */
	@Test
	void anOutageUnderASteadyStreamCostsAboutOneRedeliveryPerSecondPerConsumer(CapturedOutput output) {
		Stream stream = new Stream();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
					IdempotencyAutoConfiguration.class, IdempotencyRabbitAutoConfiguration.class,
					RabbitAutoConfiguration.class))
			.withBean(MeterRegistry.class, () -> this.registry)
			.withBean(RedisConnectionFactory.class, this.outage::connectionFactory)
			.withBean("streamQueueName", String.class, () -> this.queue)
			.withBean(Stream.class, () -> stream)
			.withUserConfiguration(StreamListener.class)
			.withPropertyValues("idempotency.backend=redis", "spring.rabbitmq.listener.simple.concurrency="
					+ Stream.CONSUMERS, "spring.rabbitmq.addresses=" + TestServers.rabbitMqUrl())
			.run((context) -> {
				RabbitTemplate template = context.getBean(RabbitTemplate.class);
				ScheduledExecutorService publisher = Executors.newSingleThreadScheduledExecutor();
				AtomicInteger sent = new AtomicInteger();
				AtomicBoolean publishing = new AtomicBoolean(true);
				try {
					publisher.scheduleAtFixedRate(() -> {
						if (publishing.get()) {
							template.send("", this.queue, MessageBuilder.withBody("100".getBytes(StandardCharsets.UTF_8))
								.setHeader(KEY_HEADER, "s-" + sent.getAndIncrement())
								.build());
						}
					}, 0, 50, TimeUnit.MILLISECONDS);
					await().atMost(TIMEOUT).until(() -> stream.runs.size() >= 20);
					int logAtBegin = output.toString().length();
					long began = System.nanoTime();
					Duration down = this.outage.beginFor(OUTAGE).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
					long back = began + down.toNanos();
					String duringOutage = output.toString().substring(logAtBegin);
					publishing.set(false);

					long from = began + Duration.ofSeconds(3).toNanos();
					long deliveries = stream.deliveries.stream().filter((at) -> at >= from && at < back).count();
					double perSecondPerConsumer = deliveries / ((back - from) / 1e9) / Stream.CONSUMERS;
					long logLines = listenerLogLines(duringOutage);
					System.out.printf("redis down %s: %.2f deliveries per second per consumer after its first 3 s, "
							+ "%d log lines during it%n", down, perSecondPerConsumer, logLines);
					assertThat(duringOutage).as("the log of the outage, as read").contains("deliveries held back");
					assertThat(perSecondPerConsumer).as("deliveries per second per consumer during the outage")
						.isLessThanOrEqualTo(1.5);
					assertThat(logLines).as("log lines of the listener's side during the outage")
						.isLessThanOrEqualTo(100);
					await().atMost(TIMEOUT).until(() -> stream.runs.size() == sent.get());
					Duration recovery = Duration.ofNanos(stream.runTimes.stream()
						.filter((at) -> at >= back)
						.min(Long::compare)
						.orElseThrow() - back);
					System.out.printf("first run %d ms after Redis's return; %d messages each run once%n", recovery.toMillis(),
							sent.get());
					assertThat(stream.runs).as("every message run once").hasSize(sent.get());
					assertThat(stream.runs.values()).allSatisfy((runs) -> assertThat(runs).hasValue(1));
					assertThat(recovery).as("from Redis's return to the first run").isLessThan(Duration.ofSeconds(5));
				}
				finally {
					publishing.set(false);
					publisher.shutdownNow();
				}
			});
	}

	/**
	 * The lines logged at INFO or above, with their stack traces, by anything but Lettuce
	 * and Netty (their reconnections every 100 ms are the test's settings); the tests log
	 * DEBUG too, which an application does not.
	 */
	private static long listenerLogLines(String log) {
		long lines = 0;
		boolean counted = false;
		for (String line : log.split("\\R")) {
			Matcher header = LOG_LINE.matcher(line);
			if (header.find()) {
				counted = !header.group(1).equals("DEBUG") && !header.group(1).equals("TRACE")
						&& !CLIENT.matcher(line).find();
			}
			if (counted) {
				lines++;
			}
		}
		return lines;
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

	/**
	 * The stream's listener: when each delivery came (every redelivery too), and how often
	 * each key ran, and when. The listener calls it through its proxy; the test reads the
	 * instance.
	 */
	static class Stream {

		static final int CONSUMERS = 2;

		final ConcurrentLinkedQueue<Long> deliveries = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Long> runTimes = new ConcurrentLinkedQueue<>();

		final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		public void delivered() {
			this.deliveries.add(System.nanoTime());
		}

		@Idempotent(key = "#key", workflow = "rabbit-stream")
		public void pay(String key) {
			this.runTimes.add(System.nanoTime());
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class StreamListener {

		private final Stream stream;

		StreamListener(Stream stream) {
			this.stream = stream;
		}

		@Bean
		Queue streamQueue(String streamQueueName) {
			return QueueBuilder.nonDurable(streamQueueName).expires(60_000).build();
		}

		@RabbitListener(queues = "#{@streamQueueName}")
		void onPayment(Message message) {
			this.stream.delivered();
			this.stream.pay(message.getMessageProperties().getHeader(KEY_HEADER));
		}

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
