package io.github.idempotency.kotlin

import io.github.idempotency.Idempotent
import io.github.idempotency.amqp.IdempotentRabbitListenerReplyCheck
import io.github.idempotency.metrics.IdempotencyMeters
import io.github.idempotency.store.RecordStatus
import io.github.idempotency.testservers.TestServers
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import org.springframework.amqp.core.Message
import org.springframework.amqp.core.MessageBuilder
import org.springframework.amqp.core.Queue
import org.springframework.amqp.core.QueueBuilder
import org.springframework.amqp.rabbit.annotation.RabbitListener
import org.springframework.amqp.rabbit.core.RabbitTemplate
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.boot.test.system.CapturedOutput
import org.springframework.boot.test.system.OutputCaptureExtension
import org.springframework.context.ApplicationContext
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.context.annotation.Bean
import java.time.Duration
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

/**
 * `@Idempotent` on a `suspend fun` `@RabbitListener` (Spring AMQP calls it as a `Mono`, an
 * asynchronous result) on the test RabbitMQ, on each store: a redelivery of a processed
 * message does not run it again, a retryable failure releases the key and the requeued
 * message runs, a permanent failure is recorded and its replay dead-lettered.
 */
@ExtendWith(OutputCaptureExtension::class)
class SuspendRabbitListenerTest {

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aRedeliveryOfAProcessedMessageDoesNotRunIt(store: Store) {
		val context = context(store)
		val key = key()
		send(context, key)
		send(context, key)
		await().atMost(TIMEOUT).until { outcomes(context, "hit") >= 1.0 && probe(context).results[key] != null }
		assertThat(probe(context).runs(key)).isEqualTo(1)
		assertThat(record(context, WORKFLOW, key)!!.status()).isEqualTo(RecordStatus.COMPLETED)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aRetryableFailureReleasesTheKeyAndTheRedeliveryRuns(store: Store) {
		val context = context(store)
		val key = "flaky-" + key()
		send(context, key)
		await().atMost(TIMEOUT).until { probe(context).results[key] != null }
		assertThat(probe(context).results[key]).isEqualTo("receipt-$key-2")
		await().atMost(TIMEOUT).until { record(context, WORKFLOW, key)?.status() == RecordStatus.COMPLETED }
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aPermanentFailureIsRecordedAndItsReplayDeadLettered(store: Store) {
		val context = context(store)
		val key = "declined-" + key()
		send(context, key)
		// run once (recorded), requeued as any failure, its redelivery a replayed failure: not
		// retryable, rejected without requeue to the dead-letter queue, not requeued for ever
		val deadLetter = context.getBean(RabbitTemplate::class.java)
			.receive(context.getBean("kotlinQueue", Queue::class.java).name + ".dlq", TIMEOUT.toMillis())
		assertThat(deadLetter).isNotNull
		assertThat(deadLetter!!.messageProperties.getHeader<String>(KEY_HEADER)).isEqualTo(key)
		assertThat(record(context, WORKFLOW, key)!!.status()).isEqualTo(RecordStatus.FAILED)
		assertThat(probe(context).runs(key)).isEqualTo(1)
	}

	@Test
	fun aUnitListenerIsNotWarnedAboutItsReply(output: CapturedOutput) {
		IdempotentRabbitListenerReplyCheck().postProcessAfterInitialization(PaymentListener(Probe()), "listener")
		IdempotentRabbitListenerReplyCheck().postProcessAfterInitialization(ReplyingListener(), "replying")
		assertThat(output).doesNotContain("PaymentListener.onPayment returns")
		assertThat(output).contains("ReplyingListener.onPayment returns String but names no reply destination")
	}

	/** The listener, proxied by the idempotency advisor; open, so that it can be. */
	open class PaymentListener(private val probe: Probe) {

		@RabbitListener(queues = ["#{kotlinQueue.name}"])
		@Idempotent(key = "#message.messageProperties.headers['idempotency-key']", workflow = WORKFLOW,
				recordFailureFor = [CardDeclinedException::class])
		open suspend fun onPayment(message: Message) {
			probe.run(requireNotNull(message.messageProperties.getHeader<String>(KEY_HEADER)))
		}

	}

	/** A listener returning a value without a reply destination: warned about. */
	open class ReplyingListener {

		@RabbitListener(queues = ["replies"])
		@Idempotent(key = "#message.messageProperties.messageId", workflow = "kotlin-replying")
		open suspend fun onPayment(message: Message): String = "receipt"

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	open class Application {

		@Bean
		open fun probe() = Probe()

		@Bean
		open fun kotlinQueue(): Queue = QueueBuilder.nonDurable("kotlin-$name").autoDelete()
			.deadLetterExchange("").deadLetterRoutingKey("kotlin-$name.dlq").build()

		@Bean
		open fun kotlinDeadLetters(): Queue = QueueBuilder.nonDurable("kotlin-$name.dlq").autoDelete().build()

		private val name = UUID.randomUUID().toString()

		@Bean
		open fun paymentListener(probe: Probe) = PaymentListener(probe)

		@Bean
		open fun meterRegistry(): MeterRegistry = SimpleMeterRegistry()

	}

	companion object {

		const val WORKFLOW = "kotlin-rabbit"

		const val KEY_HEADER = "idempotency-key"

		val TIMEOUT: Duration = Duration.ofSeconds(30)

		private val contexts = ConcurrentHashMap<Store, ConfigurableApplicationContext>()

		fun context(store: Store): ConfigurableApplicationContext = contexts.computeIfAbsent(store) {
			SpringApplicationBuilder(Application::class.java)
				.web(WebApplicationType.NONE)
				.properties(*(store.properties() + ("spring.rabbitmq.addresses=" + TestServers.rabbitMqUrl()))
					.toTypedArray())
				.run()
		}

		fun send(context: ApplicationContext, key: String) {
			val message = MessageBuilder.withBody("100".toByteArray()).setHeader(KEY_HEADER, key).build()
			context.getBean(RabbitTemplate::class.java)
				.send("", context.getBean("kotlinQueue", Queue::class.java).name, message)
		}

		fun probe(context: ApplicationContext): Probe = context.getBean(Probe::class.java)

		fun outcomes(context: ApplicationContext, outcome: String): Double =
			context.getBean(MeterRegistry::class.java)
				.find(IdempotencyMeters.REQUESTS)
				.tags(IdempotencyMeters.TAG_WORKFLOW, WORKFLOW, IdempotencyMeters.TAG_OUTCOME, outcome)
				.counters().sumOf { it.count() }

		fun key() = "rabbit-" + UUID.randomUUID()

		@JvmStatic
		@AfterAll
		fun close() {
			contexts.values.forEach { it.close() }
			contexts.clear()
		}

	}

}
