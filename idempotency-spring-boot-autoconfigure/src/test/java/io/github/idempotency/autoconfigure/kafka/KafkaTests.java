package io.github.idempotency.autoconfigure.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyKafkaAutoConfiguration;
import io.github.idempotency.metrics.IdempotencyMeters;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.test.condition.EmbeddedKafkaCondition;

import static org.awaitility.Awaitility.await;

/**
 * What the Kafka tests share: an application on the in-process broker with the starter on
 * the memory store, and the records, containers and counters they look at.
 */
final class KafkaTests {

	static final String KEY_HEADER = "idempotency-key";

	/**
	 * A log line's level: Logback's own layout ({@code 08:25:16.233 [thread] WARN logger}), or
	 * Spring Boot's once an application of another test set it up
	 * ({@code 2026-11-28T08:25:16.233Z  WARN 4242 --- [thread] logger}).
	 */
	private static final Pattern LOG_LINE = Pattern
		.compile("^\\S+\\s+(?:\\[[^\\]]*\\]\\s+)?(TRACE|DEBUG|INFO|WARN|ERROR)\\b");

	/** Lettuce's and Netty's reconnections, whose logger names Spring Boot abbreviates. */
	private static final Pattern CLIENT = Pattern.compile("lettuce|netty|ConnectionWatchdog|ReconnectionHandler");

	private KafkaTests() {
	}

	/**
	 * The starter, Spring Kafka and a meter registry on the embedded broker, the memory
	 * store, consumers reading from the earliest offset.
	 * @return the runner
	 */
	static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
					IdempotencyAutoConfiguration.class, IdempotencyKafkaAutoConfiguration.class,
					KafkaAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("idempotency.backend=memory",
					"spring.kafka.bootstrap-servers=" + EmbeddedKafkaCondition.getBroker().getBrokersAsString(),
					"spring.kafka.consumer.auto-offset-reset=earliest");
	}

	@SuppressWarnings("unchecked")
	static KafkaTemplate<String, String> template(ApplicationContext context) {
		return context.getBean(KafkaTemplate.class);
	}

	/**
	 * A record whose {@value #KEY_HEADER} header carries {@code key}.
	 */
	static ProducerRecord<String, String> record(String topic, int partition, String key, String value) {
		RecordHeaders headers = new RecordHeaders();
		headers.add(KEY_HEADER, key.getBytes(StandardCharsets.UTF_8));
		return new ProducerRecord<>(topic, partition, key, value, headers);
	}

	static ConcurrentMessageListenerContainer<?, ?> container(ApplicationContext context, String id) {
		return (ConcurrentMessageListenerContainer<?, ?>) context.getBean(KafkaListenerEndpointRegistry.class)
			.getListenerContainer(id);
	}

	/**
	 * Waits until every consumer thread of the container owns a partition.
	 */
	static void awaitAssignment(ConcurrentMessageListenerContainer<?, ?> container, Duration timeout) {
		await().atMost(timeout)
			.until(() -> container.getContainers()
				.stream()
				.allMatch((child) -> !child.getAssignedPartitions().isEmpty()));
	}

	/**
	 * The {@code idempotency.requests} count of a workflow and outcome.
	 */
	static double requests(ApplicationContext context, String workflow, String outcome) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_WORKFLOW, workflow, IdempotencyMeters.TAG_OUTCOME, outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	/**
	 * The lines logged at INFO or above, with their stack traces, by anything but Lettuce
	 * and Netty (their reconnections every 100 ms are the tests' settings); the tests log
	 * DEBUG too, which an application does not.
	 */
	static long logLines(String log) {
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

}
