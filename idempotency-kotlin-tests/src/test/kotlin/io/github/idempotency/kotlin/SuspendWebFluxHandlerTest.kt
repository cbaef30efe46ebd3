package io.github.idempotency.kotlin

import io.github.idempotency.Idempotent
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Import
import org.springframework.test.web.reactive.server.EntityExchangeResult
import org.springframework.test.web.reactive.server.WebTestClient
import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RequestBody
import org.springframework.web.bind.annotation.RequestHeader
import org.springframework.web.bind.annotation.RestController
import org.springframework.web.reactive.function.client.WebClient
import java.time.Duration
import java.util.UUID
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap

/**
 * `@Idempotent` on a `suspend fun` WebFlux handler method, over HTTP: the key from the
 * `Idempotency-Key` header, what the client received stored and replayed, on each store.
 */
class SuspendWebFluxHandlerTest {

	@ParameterizedTest
	@EnumSource(Store::class)
	fun theFirstCallRunsAndADuplicateIsReplayedWithoutRunning(store: Store) {
		val context = context(store)
		val key = key()
		val first = post(context, key)
		assertThat(first.status.value()).isEqualTo(200)
		assertThat(first.responseBody).isEqualTo("receipt-$key-1")
		assertThat(first.responseHeaders.getFirst(REPLAYED)).isNull()
		val second = post(context, key)
		assertThat(second.status.value()).isEqualTo(200)
		assertThat(second.responseBody).isEqualTo("receipt-$key-1")
		assertThat(second.responseHeaders.getFirst(REPLAYED)).isEqualTo("true")
		assertThat(probe(context).runs(key)).isEqualTo(1)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aPermanentFailureIsReplayed(store: Store) {
		val context = context(store)
		val key = "declined-" + key()
		val first = post(context, key)
		assertThat(first.status.value()).isEqualTo(402)
		val second = post(context, key)
		assertThat(second.status.value()).isEqualTo(402)
		assertThat(second.responseHeaders.getFirst(REPLAYED)).isEqualTo("true")
		assertThat(probe(context).runs(key)).isEqualTo(1)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aRetryableFailureReleasesTheKey(store: Store) {
		val context = context(store)
		val key = "flaky-" + key()
		assertThat(post(context, key).status.value()).isEqualTo(500)
		val second = post(context, key)
		assertThat(second.status.value()).isEqualTo(200)
		assertThat(second.responseBody).isEqualTo("receipt-$key-2")
		assertThat(second.responseHeaders.getFirst(REPLAYED)).isNull()
		assertThat(probe(context).runs(key)).isEqualTo(2)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aSecondRequestWaitsForTheRunAndGetsItsAnswer(store: Store) {
		val context = context(store)
		val probe = probe(context)
		val key = key()
		probe.hold(key)
		val first = CompletableFuture.supplyAsync { post(context, key) }
		runBlocking { probe.awaitEntered(key) }
		val conflicts = conflicts(context, WORKFLOW)
		val second = CompletableFuture.supplyAsync { post(context, key) }
		await().atMost(TIMEOUT).until { conflicts(context, WORKFLOW) > conflicts }
		probe.open(key)
		assertThat(first.join().responseBody).isEqualTo("receipt-$key-1")
		assertThat(second.join().responseBody).isEqualTo("receipt-$key-1")
		assertThat(second.join().responseHeaders.getFirst(REPLAYED)).isEqualTo("true")
		assertThat(probe.runs(key)).isEqualTo(1)
	}

	@ParameterizedTest
	@EnumSource(Store::class)
	fun aClientThatGoesAwayDoesNotCancelTheClaimedRun(store: Store) {
		val context = context(store)
		val probe = probe(context)
		val key = key()
		probe.hold(key)
		val client = WebClient.create("http://localhost:" + port(context))
		val request = client.post()
			.uri("/payments")
			.header("Idempotency-Key", key)
			.bodyValue("100")
			.retrieve()
			.bodyToMono(String::class.java)
			.subscribe()
		runBlocking { probe.awaitEntered(key) }
		request.dispose()
		probe.open(key)
		await().atMost(TIMEOUT).until { probe.results[key] != null }
		val later = post(context, key)
		assertThat(later.responseBody).isEqualTo("receipt-$key-1")
		assertThat(later.responseHeaders.getFirst(REPLAYED)).isEqualTo("true")
		assertThat(probe.runs(key)).isEqualTo(1)
	}

	/** A controller whose suspending handler method is idempotent; open, so that it can be proxied. */
	@RestController
	open class Payments(private val probe: Probe) {

		@Idempotent(workflow = WORKFLOW, recordFailureFor = [CardDeclinedException::class])
		@PostMapping("/payments")
		open suspend fun pay(@RequestHeader("Idempotency-Key") key: String, @RequestBody amount: String): String =
			probe.run(key)

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Payments::class)
	open class Application {

		@Bean
		open fun probe() = Probe()

		@Bean
		open fun meterRegistry(): MeterRegistry = SimpleMeterRegistry()

	}

	companion object {

		const val WORKFLOW = "kotlin-http"

		const val REPLAYED = "Idempotent-Replayed"

		val TIMEOUT: Duration = Duration.ofSeconds(30)

		private val contexts = ConcurrentHashMap<Store, ConfigurableApplicationContext>()

		fun context(store: Store): ConfigurableApplicationContext = contexts.computeIfAbsent(store) {
			SpringApplicationBuilder(Application::class.java)
				.web(WebApplicationType.REACTIVE)
				.properties(*(store.properties() + "server.port=0").toTypedArray())
				.run()
		}

		fun probe(context: ConfigurableApplicationContext): Probe = context.getBean(Probe::class.java)

		fun port(context: ConfigurableApplicationContext): String =
			context.environment.getRequiredProperty("local.server.port")

		fun post(context: ConfigurableApplicationContext, key: String): EntityExchangeResult<String> =
			WebTestClient.bindToServer()
				.baseUrl("http://localhost:" + port(context))
				.responseTimeout(TIMEOUT)
				.build()
				.post()
				.uri("/payments")
				.header("Idempotency-Key", key)
				.bodyValue("100")
				.exchange()
				.expectBody(String::class.java)
				.returnResult()

		fun key() = "http-" + UUID.randomUUID()

		@JvmStatic
		@AfterAll
		fun close() {
			contexts.values.forEach { it.close() }
			contexts.clear()
		}

	}

}
