package io.github.idempotency.kotlin

import io.github.idempotency.metrics.IdempotencyMeters
import io.github.idempotency.store.IdempotencyRecord
import io.github.idempotency.store.IdempotencyStore
import io.github.idempotency.store.RecordId
import io.github.idempotency.testservers.TestServers
import io.micrometer.core.instrument.MeterRegistry
import kotlinx.coroutines.CompletableDeferred
import org.springframework.context.ApplicationContext
import org.springframework.http.HttpStatus
import org.springframework.web.bind.annotation.ResponseStatus
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/** The stores every case runs on: the in-memory one and the servers'. */
enum class Store(private val own: List<String>) {

	MEMORY(listOf("idempotency.backend=memory")),

	JDBC(listOf("idempotency.backend=jdbc", "idempotency.jdbc.initialize-schema=always",
			"idempotency.jdbc.table-name=idempotency_kotlin")),

	REDIS(listOf("idempotency.backend=redis"));

	/** The store's properties, with the servers' addresses (each test's keys are its own). */
	fun properties(): List<String> = own + listOf("spring.datasource.url=" + TestServers.postgresUrl(),
			"spring.data.redis.url=" + TestServers.redisUrl())

}

/** A permanent failure: recorded (recordFailureFor) and replayed; answered 402 over HTTP. */
@ResponseStatus(HttpStatus.PAYMENT_REQUIRED)
class CardDeclinedException(message: String) : RuntimeException(message)

/**
 * What the suspending bodies did, read by the tests: the runs per key, the values they
 * returned, and a gate a body waits on (a [CompletableDeferred], never a delay) once it
 * said it entered. Not proxied: the tests read it directly.
 */
class Probe {

	val runs = ConcurrentHashMap<String, AtomicInteger>()

	val results = ConcurrentHashMap<String, String>()

	private val entered = ConcurrentHashMap<String, CompletableDeferred<Unit>>()

	private val gates = ConcurrentHashMap<String, CompletableDeferred<Unit>>()

	fun runs(key: String): Int = runs[key]?.get() ?: 0

	/** The next run of [key] waits until [open] is called. */
	fun hold(key: String) {
		gates[key] = CompletableDeferred()
	}

	fun open(key: String) {
		gates.getValue(key).complete(Unit)
	}

	suspend fun awaitEntered(key: String) = entered(key).await()

	private fun entered(key: String) = entered.computeIfAbsent(key) { CompletableDeferred() }

	/**
	 * The body every shape runs: counts the run, waits at the gate if one is set, fails as
	 * the key says (`declined-`: permanently; `flaky-`: on its first run), else returns a
	 * new receipt.
	 */
	suspend fun run(key: String): String {
		val run = runs.computeIfAbsent(key) { AtomicInteger() }.incrementAndGet()
		entered(key).complete(Unit)
		gates[key]?.await()
		if (key.startsWith("declined-")) {
			throw CardDeclinedException("card declined for $key")
		}
		if (key.startsWith("flaky-") && run == 1) {
			throw IllegalStateException("the card network timed out for $key")
		}
		val receipt = "receipt-$key-$run"
		results[key] = receipt
		return receipt
	}

}

fun record(context: ApplicationContext, workflow: String, key: String): IdempotencyRecord? =
	context.getBean(IdempotencyStore::class.java).find(RecordId(workflow, key)).orElse(null)

/** How many calls the engine answered with a stored result. */
fun hits(context: ApplicationContext): Double =
	context.getBean(MeterRegistry::class.java)
		.find(IdempotencyMeters.REQUESTS)
		.tags(IdempotencyMeters.TAG_OUTCOME, "hit")
		.counter()?.count() ?: 0.0

/** How many calls of [workflow] found their key running elsewhere (once per call). */
fun conflicts(context: ApplicationContext, workflow: String): Double =
	context.getBean(MeterRegistry::class.java)
		.find(IdempotencyMeters.CONFLICTS)
		.tags(IdempotencyMeters.TAG_WORKFLOW, workflow)
		.counter()?.count() ?: 0.0
