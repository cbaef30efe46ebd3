package io.github.idempotency.autoconfigure.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.idempotency.Idempotent;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.PostgresOutage;
import io.github.idempotency.testservers.RedisOutage;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.RecordInterceptor;
import org.springframework.kafka.test.context.EmbeddedKafka;

import static io.github.idempotency.autoconfigure.kafka.KafkaTests.awaitAssignment;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.container;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.record;
import static io.github.idempotency.autoconfigure.kafka.KafkaTests.template;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @KafkaListener} whose store goes away, on the in-process broker:
 * <ul>
 * <li>after the claim and before the result, on a private redis-server that keeps its
 * writes across a stop, or a private PostgreSQL server that crashes: the listener's thread
 * stores the result once the store is back, so the broker does not redeliver and the
 * payment is charged once;</li>
 * <li>under a steady stream of records, on the private redis-server: the records whose
 * claims fail are retried by the error handler after a pause that grows to a second and
 * never runs out, so the outage costs about one delivery per second per consumer and a few
 * log lines, no offset is skipped, and every record runs once after it.</li>
 * </ul>
 */
@EmbeddedKafka(partitions = 1, topics = KafkaOutageTest.CHARGES)
@ExtendWith(OutputCaptureExtension.class)
class KafkaOutageTest {

	static final String CHARGES = "charges-outage";

	static final String STREAM = "payments-stream";

	static final String BATCHES = "payments-batches";

	private static final Duration OUTAGE = Duration.ofSeconds(12);

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
	 * Two consumers of two partitions, a record every 50 ms, and Redis down for 12 s.
	 * Measured: deliveries per second per consumer from 3 s into the outage until its end
	 * (at most 1.5, about one per second; without the back-off, ten at once per record,
	 * which is then skipped), the log lines written during the outage by the listener's
	 * side (at most 150: about three per delivery, two of them Kafka's and Spring Kafka's),
	 * every record run exactly once (none skipped), and the first run within 5 s of Redis's
	 * return.
	 */
	@Test
	void anOutageUnderASteadyStreamCostsAboutOneDeliveryPerSecondPerConsumer(CapturedOutput output) throws Exception {
		Stream stream = new Stream();
		try (RedisOutage outage = new RedisOutage()) {
			KafkaTests.runner()
				.withBean(RedisConnectionFactory.class, outage::connectionFactory)
				.withBean(Stream.class, () -> stream)
				.withBean(NewTopic.class, () -> new NewTopic(STREAM, Stream.CONSUMERS, (short) 1))
				.withBean(RecordInterceptor.class, () -> (record, consumer) -> {
					stream.deliveries.add(System.nanoTime());
					return record;
				})
				.withUserConfiguration(StreamListener.class)
				.withPropertyValues("idempotency.backend=redis")
				.run((context) -> {
					awaitAssignment(container(context, STREAM), TIMEOUT);
					ScheduledExecutorService publisher = Executors.newSingleThreadScheduledExecutor();
					AtomicInteger sent = new AtomicInteger();
					AtomicBoolean publishing = new AtomicBoolean(true);
					try {
						publisher.scheduleAtFixedRate(() -> {
							if (publishing.get()) {
								int n = sent.getAndIncrement();
								template(context).send(record(STREAM, n % Stream.CONSUMERS, "s-" + n, "100"));
							}
						}, 0, 50, TimeUnit.MILLISECONDS);
						await().atMost(TIMEOUT).until(() -> stream.runs.size() >= 20);
						int logAtBegin = output.toString().length();
						long began = System.nanoTime();
						Duration down = outage.beginFor(OUTAGE).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
						long back = began + down.toNanos();
						String duringOutage = output.toString().substring(logAtBegin);
						publishing.set(false);

						long from = began + Duration.ofSeconds(3).toNanos();
						long deliveries = stream.deliveries.stream().filter((at) -> at >= from && at < back).count();
						double perSecondPerConsumer = deliveries / ((back - from) / 1e9) / Stream.CONSUMERS;
						long logLines = KafkaTests.logLines(duringOutage);
						System.out.printf("redis down %s: %.2f deliveries per second per consumer after its first 3 s, "
								+ "%d log lines during it%n", down, perSecondPerConsumer, logLines);
						assertThat(duringOutage).as("the log of the outage, as read").contains("deliveries held back");
						assertThat(perSecondPerConsumer).as("deliveries per second per consumer during the outage")
							.isLessThanOrEqualTo(1.5);
						// per delivery, the consumer's seek and Spring Kafka's "Record in retry" (INFO),
						// and at most a line per interval of the back-off's
						assertThat(logLines).as("log lines of the listener's side during the outage")
							.isLessThanOrEqualTo(150);
						await().atMost(TIMEOUT).until(() -> stream.runs.size() == sent.get());
						Duration recovery = Duration.ofNanos(stream.runTimes.stream()
							.filter((at) -> at >= back)
							.min(Long::compare)
							.orElseThrow() - back);
						System.out.printf("first run %d ms after Redis's return; %d records each run once%n", recovery.toMillis(),
								sent.get());
						assertThat(stream.runs).as("every record run once").hasSize(sent.get());
						assertThat(stream.runs.values()).allSatisfy((runs) -> assertThat(runs).hasValue(1));
						assertThat(recovery).as("from Redis's return to the first run")
							.isLessThan(Duration.ofSeconds(5));
					}
					finally {
						publishing.set(false);
						publisher.shutdownNow();
					}
				});
		}
	}

	/**
	 * A batch listener whose batch cannot be claimed while Redis is down for 5 s: the
	 * error handler retries the batch with the back-off of a store outage (Spring Kafka asks
	 * the back-off function with the batch's first record), which never runs out, so no
	 * record is skipped and each runs once after it (without it, the batch is retried nine
	 * times at once and then skipped).
	 */
	@Test
	void aBatchThatCannotBeClaimedWhileRedisIsDownIsNotSkipped() throws Exception {
		Stream stream = new Stream();
		try (RedisOutage outage = new RedisOutage()) {
			KafkaTests.runner()
				.withBean(RedisConnectionFactory.class, outage::connectionFactory)
				.withBean(Stream.class, () -> stream)
				.withBean(NewTopic.class, () -> new NewTopic(BATCHES, 1, (short) 1))
				.withUserConfiguration(BatchListener.class)
				.withPropertyValues("idempotency.backend=redis")
				.run((context) -> {
					awaitAssignment(container(context, BATCHES), TIMEOUT);
					CompletableFuture<Duration> back = outage.beginFor(Duration.ofSeconds(5));
					for (int n = 0; n < 20; n++) {
						template(context).send(record(BATCHES, 0, "b-" + n, "100"));
					}
					template(context).flush();
					back.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
					await().atMost(TIMEOUT).until(() -> stream.runs.size() == 20);
					assertThat(stream.runs.values()).allSatisfy((runs) -> assertThat(runs).hasValue(1));
				});
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

	/**
	 * When each record was delivered (every retry too), and how often each key ran, and
	 * when.
	 */
	static class Stream {

		static final int CONSUMERS = 2;

		final Queue<Long> deliveries = new ConcurrentLinkedQueue<>();

		final Queue<Long> runTimes = new ConcurrentLinkedQueue<>();

		final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	}

	@Configuration(proxyBeanMethods = false)
	static class StreamListener {

		private final Stream stream;

		StreamListener(Stream stream) {
			this.stream = stream;
		}

		@KafkaListener(id = STREAM, topics = STREAM, concurrency = "2")
		@Idempotent(key = "#record.key()", workflow = "kafka-stream")
		public void onPayment(ConsumerRecord<String, String> record) {
			this.stream.runTimes.add(System.nanoTime());
			this.stream.runs.computeIfAbsent(record.key(), (k) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BatchListener {

		private final Stream stream;

		BatchListener(Stream stream) {
			this.stream = stream;
		}

		@KafkaListener(id = BATCHES, topics = BATCHES, batch = "true")
		@Idempotent(batch = "records", key = "#item.key()", workflow = "kafka-batches")
		public void onPayments(List<ConsumerRecord<String, String>> records) {
			records.forEach((record) -> this.stream.runs.computeIfAbsent(record.key(), (k) -> new AtomicInteger())
				.incrementAndGet());
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
