package io.github.idempotency.kotlin

import io.github.idempotency.IdempotentFailureReplayedException
import io.github.idempotency.Idempotent
import io.github.idempotency.store.RecordStatus
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import org.springframework.aop.support.AopUtils
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.context.annotation.Bean
import java.time.Duration
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

/**
 * `@Idempotent` on a `suspend fun` bean method: the engine follows it as a `Mono` of its
 * value, with the semantics of the Java shapes, on each store.
 */
class SuspendBeanMethodTest {

	@ParameterizedTest
	@EnumSource(Store::class)
	fun theFirstCallRunsAndStoresItsValue(store: Store): Unit = runBlocking {
		val context = context(store)
		val key = key()
		val receipt = context.getBean(Payments::class.java).charge(key, 100)
		assertThat(receipt).isEqualTo("receipt-$key-1")
		val stored = record(context, WORKFLOW, key)
		assertThat(stored).isNotNull
		assertThat(stored!!.status()).isEqualTo(RecordStatus.COMPLETED)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aSecondCallReturnsTheStoredValueWithoutRunning(store: Store): Unit = runBlocking {
		val context = context(store)
		val payments = context.getBean(Payments::class.java)
		val probe = context.getBean(Probe::class.java)
		val key = key()
		val first = payments.charge(key, 100)
		val second = payments.charge(key, 100)
		assertThat(second).isEqualTo(first)
		assertThat(probe.runs(key)).isEqualTo(1)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aUnitFunctionRunsOnce(store: Store): Unit = runBlocking {
		val context = context(store)
		val payments = context.getBean(Payments::class.java)
		val probe = context.getBean(Probe::class.java)
		val key = key()
		payments.notify(key)
		payments.notify(key)
		assertThat(probe.runs(key)).isEqualTo(1)
		assertThat(record(context, "kotlin-notify", key)!!.status()).isEqualTo(RecordStatus.COMPLETED)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aPermanentFailureIsReplayed(store: Store): Unit = runBlocking {
		val context = context(store)
		val payments = context.getBean(Payments::class.java)
		val probe = context.getBean(Probe::class.java)
		val key = "declined-" + key()
		assertThatExceptionOfType(CardDeclinedException::class.java)
			.isThrownBy { runBlocking { payments.charge(key, 100) } }
		assertThatExceptionOfType(IdempotentFailureReplayedException::class.java)
			.isThrownBy { runBlocking { payments.charge(key, 100) } }
		assertThat(probe.runs(key)).isEqualTo(1)
		assertThat(record(context, WORKFLOW, key)!!.status()).isEqualTo(RecordStatus.FAILED)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aRetryableFailureReleasesTheKey(store: Store): Unit = runBlocking {
		val context = context(store)
		val payments = context.getBean(Payments::class.java)
		val probe = context.getBean(Probe::class.java)
		val key = "flaky-" + key()
		assertThatExceptionOfType(IllegalStateException::class.java)
			.isThrownBy { runBlocking { payments.charge(key, 100) } }
		assertThat(record(context, WORKFLOW, key)).isNull()
		assertThat(payments.charge(key, 100)).isEqualTo("receipt-$key-2")
		assertThat(probe.runs(key)).isEqualTo(2)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aSecondCallerWaitsForTheRunAndGetsItsValue(store: Store): Unit = runBlocking {
		val context = context(store)
		val payments = context.getBean(Payments::class.java)
		val probe = context.getBean(Probe::class.java)
		val key = key()
		probe.hold(key)
		val first = async(Dispatchers.Default) { payments.charge(key, 100) }
		probe.awaitEntered(key)
		val conflicts = conflicts(context, WORKFLOW)
		val second = async(Dispatchers.Default) { payments.charge(key, 100) }
		// the second caller finds the key in progress: it waits (the default), nothing runs
		await().atMost(TIMEOUT).until { conflicts(context, WORKFLOW) > conflicts }
		probe.open(key)
		assertThat(second.await()).isEqualTo(first.await())
		assertThat(probe.runs(key)).isEqualTo(1)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aCancelledCallerDoesNotCancelTheClaimedRun(store: Store): Unit = runBlocking {
		val context = context(store)
		val payments = context.getBean(Payments::class.java)
		val probe = context.getBean(Probe::class.java)
		val key = key()
		probe.hold(key)
		val caller = launch(Dispatchers.Default) { payments.charge(key, 100) }
		probe.awaitEntered(key)
		caller.cancelAndJoin()
		assertThat(record(context, WORKFLOW, key)!!.status()).isEqualTo(RecordStatus.IN_PROGRESS)
		probe.open(key)
		await().atMost(TIMEOUT).until { record(context, WORKFLOW, key)?.status() == RecordStatus.COMPLETED }
		assertThat(probe.results[key]).isEqualTo("receipt-$key-1")
		assertThat(payments.charge(key, 100)).isEqualTo("receipt-$key-1")
		assertThat(probe.runs(key)).isEqualTo(1)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun theBeanIsProxied(store: Store) {
		assertThat(AopUtils.isAopProxy(context(store).getBean(Payments::class.java))).isTrue()
	}

	/** A bean whose suspending methods are idempotent; open, so that it can be proxied. */
	open class Payments(private val probe: Probe) {

		@Idempotent(key = "#key", workflow = WORKFLOW, recordFailureFor = [CardDeclinedException::class])
		open suspend fun charge(key: String, amount: Int): String = probe.run(key)

		@Idempotent(key = "#key", workflow = "kotlin-notify")
		open suspend fun notify(key: String) {
			probe.run(key)
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	open class Application {

		@Bean
		open fun probe() = Probe()

		@Bean
		open fun payments(probe: Probe) = Payments(probe)

		@Bean
		open fun meterRegistry(): MeterRegistry = SimpleMeterRegistry()

	}

	companion object {

		const val WORKFLOW = "kotlin-charge"

		val TIMEOUT: Duration = Duration.ofSeconds(30)

		private val contexts = ConcurrentHashMap<Store, ConfigurableApplicationContext>()

		fun context(store: Store): ConfigurableApplicationContext = contexts.computeIfAbsent(store) {
			SpringApplicationBuilder(Application::class.java)
				.web(WebApplicationType.NONE)
				.properties(*store.properties().toTypedArray())
				.run()
		}

		fun key() = "bean-" + UUID.randomUUID()

		@JvmStatic
		@AfterAll
		fun close() {
			contexts.values.forEach { it.close() }
			contexts.clear()
		}

	}

}
