package io.github.idempotency.kotlin

import io.github.idempotency.Idempotent
import io.github.idempotency.metrics.IdempotencyMeters
import io.github.idempotency.store.RecordStatus
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import org.apache.kafka.clients.consumer.ConsumerRecord
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.context.ApplicationContext
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.kafka.annotation.KafkaListener
import org.springframework.kafka.core.KafkaTemplate
import org.springframework.kafka.test.condition.EmbeddedKafkaCondition
import org.springframework.kafka.test.context.EmbeddedKafka
import java.time.Duration
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

/**
 * `@Idempotent` on a `suspend fun` `@KafkaListener` (Spring Kafka calls it as a `Mono`,
 * an asynchronous result) on the in-process broker, on each store: a redelivery of a
 * processed record does not run it again, a retryable failure releases the key and the
 * error handler's redelivery runs it, a permanent failure is recorded and replayed.
 */
@EmbeddedKafka(partitions = 1, topics = ["kotlin-memory", "kotlin-jdbc", "kotlin-redis", "kotlin-manual"])
class SuspendKafkaListenerTest {

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aRedeliveryOfAProcessedRecordDoesNotRunIt(store: Store) {
		val context = context(store)
		val key = key()
		send(context, store, key)
		send(context, store, key)
		await().atMost(TIMEOUT).until { outcomes(context, "hit") >= 1.0 && probe(context).results[key] != null }
		assertThat(probe(context).runs(key)).isEqualTo(1)
		assertThat(record(context, WORKFLOW, key)!!.status()).isEqualTo(RecordStatus.COMPLETED)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aRetryableFailureReleasesTheKeyAndTheRedeliveryRuns(store: Store) {
		val context = context(store)
		val key = "flaky-" + key()
		send(context, store, key)
		await().atMost(TIMEOUT).until { probe(context).results[key] != null }
		assertThat(probe(context).results[key]).isEqualTo("receipt-$key-2")
		await().atMost(TIMEOUT).until { record(context, WORKFLOW, key)?.status() == RecordStatus.COMPLETED }
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aPermanentFailureIsRecordedAndNotRunAgain(store: Store) {
		val context = context(store)
		val key = "declined-" + key()
		val replayed = outcomes(context, "failed")
		send(context, store, key)
		await().atMost(TIMEOUT).until { record(context, WORKFLOW, key)?.status() == RecordStatus.FAILED }
		send(context, store, key)
		await().atMost(TIMEOUT).until { outcomes(context, "failed") > replayed }
		assertThat(probe(context).runs(key)).isEqualTo(1)
	}

	@Test
	fun aSuspendListenerIsAcknowledgedBySpringKafkaUnderManualAcknowledgement() {
		// asynchronous, as a Mono: Spring Kafka acknowledges it when it completes, so the
		// starter does not ask it for an Acknowledgment (the start would fail)
		SpringApplicationBuilder(Application::class.java)
			.web(WebApplicationType.NONE)
			.properties(*(Store.MEMORY.properties() + listOf("kotlin.topic=kotlin-manual",
					"spring.kafka.listener.ack-mode=manual",
					"spring.kafka.bootstrap-servers=" + EmbeddedKafkaCondition.getBroker()!!.brokersAsString,
					"spring.kafka.consumer.auto-offset-reset=earliest")).toTypedArray())
			.run()
			.use { context ->
				@Suppress("UNCHECKED_CAST")
				val template = context.getBean(KafkaTemplate::class.java) as KafkaTemplate<String, String>
				val key = key()
				template.send("kotlin-manual", key, "100").get()
				template.send("kotlin-manual", key, "100").get()
				await().atMost(TIMEOUT).until { outcomes(context, "hit") >= 1.0 && probe(context).results[key] != null }
				assertThat(probe(context).runs(key)).isEqualTo(1)
			}
	}

	/** The listener, proxied by the idempotency advisor; open, so that it can be. */
	open class PaymentListener(private val probe: Probe) {

		@KafkaListener(id = "\${kotlin.topic}", topics = ["\${kotlin.topic}"])
		@Idempotent(key = "#record.key()", workflow = WORKFLOW, recordFailureFor = [CardDeclinedException::class])
		open suspend fun onPayment(record: ConsumerRecord<String, String>) {
			probe.run(record.key())
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	open class Application {

		@Bean
		open fun probe() = Probe()

		@Bean
		open fun paymentListener(probe: Probe) = PaymentListener(probe)

		@Bean
		open fun meterRegistry(): MeterRegistry = SimpleMeterRegistry()

	}

	companion object {

		const val WORKFLOW = "kotlin-kafka"

		val TIMEOUT: Duration = Duration.ofSeconds(60)

		private val contexts = ConcurrentHashMap<Store, ConfigurableApplicationContext>()

		fun context(store: Store): ConfigurableApplicationContext = contexts.computeIfAbsent(store) {
			SpringApplicationBuilder(Application::class.java)
				.web(WebApplicationType.NONE)
				.properties(*(store.properties() + listOf("kotlin.topic=" + topic(store),
						"spring.kafka.bootstrap-servers=" + EmbeddedKafkaCondition.getBroker()!!.brokersAsString,
						"spring.kafka.consumer.auto-offset-reset=earliest")).toTypedArray())
				.run()
		}

		fun topic(store: Store) = "kotlin-" + store.name.lowercase()

		@Suppress("UNCHECKED_CAST")
		fun send(context: ApplicationContext, store: Store, key: String) {
			val template = context.getBean(KafkaTemplate::class.java) as KafkaTemplate<String, String>
			template.send(topic(store), key, "100").get()
		}

		fun probe(context: ApplicationContext): Probe = context.getBean(Probe::class.java)

		fun outcomes(context: ApplicationContext, outcome: String): Double =
			context.getBean(MeterRegistry::class.java)
				.find(IdempotencyMeters.REQUESTS)
				.tags(IdempotencyMeters.TAG_WORKFLOW, WORKFLOW, IdempotencyMeters.TAG_OUTCOME, outcome)
				.counters().sumOf { it.count() }

		fun key() = "kafka-" + UUID.randomUUID()

		@JvmStatic
		@AfterAll
		fun close() {
			contexts.values.forEach { it.close() }
			contexts.clear()
		}

	}

}
