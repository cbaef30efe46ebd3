package io.github.idempotency.kotlin

import io.github.idempotency.internal.EngineSuites
import io.github.idempotency.internal.IdempotencyEngine
import io.github.idempotency.internal.IdempotentOperation
import io.github.idempotency.internal.Shape
import io.github.idempotency.internal.ShapeBodies
import io.github.idempotency.internal.ThroughShapes
import io.github.idempotency.store.IdempotencyStore
import io.github.idempotency.store.ReactiveIdempotencyStore
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore
import io.github.idempotency.store.memory.MemoryIdempotencyStore
import io.github.idempotency.store.r2dbc.R2dbcIdempotencyStore
import io.github.idempotency.store.redis.ReactiveRedisIdempotencyStore
import io.github.idempotency.store.redis.RedisIdempotencyStore
import io.github.idempotency.testservers.RedisConnections
import io.github.idempotency.testservers.TestDatabases
import io.github.idempotency.testservers.TestServers
import io.r2dbc.spi.ConnectionFactories
import io.r2dbc.spi.ConnectionFactory
import kotlinx.coroutines.future.await
import kotlinx.coroutines.runBlocking
import org.aopalliance.intercept.MethodInterceptor
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.extension.AfterAllCallback
import org.junit.jupiter.api.extension.BeforeAllCallback
import org.junit.jupiter.api.extension.ExtendWith
import org.junit.jupiter.api.extension.ExtensionContext
import org.springframework.aop.framework.ProxyFactory
import org.springframework.core.PropagationContextElement
import org.springframework.core.ResolvableType
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory
import reactor.core.publisher.Hooks
import reactor.core.publisher.Mono
import java.lang.reflect.Type
import java.time.Clock
import java.time.Duration
import java.util.UUID
import java.util.function.Supplier
import javax.sql.DataSource

/**
 * A Kotlin `suspend fun` behind Spring AOP, as `@Idempotent` advises one: Spring calls the
 * function as a `Mono` of its value, the advice hands that `Mono` to the engine (as
 * `IdempotentInterceptor` does once it has the key), and the proxy awaits what the advice
 * returns as the caller's result. The caller is a coroutine; the function awaits its body
 * on a thread of its own, as the Java asynchronous shapes do ([ShapeBodies]), started with
 * the run's context as the function sees it: with Reactor's automatic context propagation,
 * which Spring's call of a suspending function restores on whichever thread it resumes.
 */
enum class SuspendShape : Shape {

	SUSPEND_FUN;

	override fun resultType(valueType: Type): Type =
		ResolvableType.forClassWithGenerics(Mono::class.java, ResolvableType.forType(valueType)).type

	override fun call(engine: IdempotencyEngine, operation: IdempotentOperation, key: String, payload: Any?,
			body: Supplier<Any?>): Any? {
		val proxy = ProxyFactory(Charges()).run {
			isProxyTargetClass = true
			addAdvice(MethodInterceptor { invocation -> engine.execute(operation, key, payload) { invocation.proceed() } })
			proxy as Charges
		}
		return runBlocking(PropagationContextElement()) { proxy.charge(body) }
	}

}

/** The proxied bean: its `suspend fun` runs the case's body. */
open class Charges {

	open suspend fun charge(body: Supplier<Any?>): Any? = ShapeBodies.offloaded(body).await()

}

/**
 * The engine's suites ([EngineSuites]: the protocol on the blocking and the non-blocking path)
 * run through a `suspend fun` ([SuspendShape]) instead of the Java shapes, case for case, on
 * every store; with Reactor's automatic context propagation on, as a Kotlin application that
 * reads its `IdempotencyContext` has it (`spring.reactor.context-propagation=auto`).
 */
@Target(AnnotationTarget.CLASS)
@Retention(AnnotationRetention.RUNTIME)
@ThroughShapes(SuspendShape::class)
@ExtendWith(AutomaticContextPropagation::class)
annotation class ThroughASuspendFun

/** Reactor's automatic context propagation, on for a test class and off again after it (it is global). */
class AutomaticContextPropagation : BeforeAllCallback, AfterAllCallback {

	override fun beforeAll(context: ExtensionContext) = Hooks.enableAutomaticContextPropagation()

	override fun afterAll(context: ExtensionContext) = Hooks.disableAutomaticContextPropagation()

}

@ThroughASuspendFun
class MemorySuspendEngineTest : EngineSuites() {

	override fun store(clock: Clock): IdempotencyStore = MemoryIdempotencyStore(clock)

}

/** A test database: its pools, on which the table is made once. */
enum class Database(private val url: () -> String, private val pool: () -> DataSource, private val platform: String) {

	POSTGRES(TestServers::postgresUrl, TestDatabases::postgres, "postgresql"),

	MARIADB(TestServers::mariaDbUrl, TestDatabases::mariaDb, "mysql");

	val dataSource: DataSource by lazy { pool().also { TestDatabases.createTable(it, platform, TABLE) } }

	val connections: ConnectionFactory by lazy { dataSource.let { ConnectionFactories.get(TestServers.r2dbcUrl(url(), 8)) } }

}

/** The jdbc store on [database]. */
abstract class JdbcSuspendEngines(private val database: Database) : EngineSuites() {

	override fun store(clock: Clock): IdempotencyStore =
		JdbcIdempotencyStore(database.dataSource, TABLE, Duration.ofSeconds(5), clock)

}

/** The r2dbc store on [database]: the blocking path through its blocking view. */
abstract class R2dbcSuspendEngines(private val database: Database) : EngineSuites() {

	override fun store(clock: Clock): IdempotencyStore = ReactiveIdempotencyStore.blocking(reactiveStore(clock))

	override fun reactiveStore(clock: Clock): ReactiveIdempotencyStore =
		R2dbcIdempotencyStore(database.connections, TABLE, Duration.ofSeconds(5), clock)

}

@ThroughASuspendFun
class PostgresJdbcSuspendEngineTest : JdbcSuspendEngines(Database.POSTGRES)

@ThroughASuspendFun
class MariaDbJdbcSuspendEngineTest : JdbcSuspendEngines(Database.MARIADB)

@ThroughASuspendFun
class PostgresR2dbcSuspendEngineTest : R2dbcSuspendEngines(Database.POSTGRES)

@ThroughASuspendFun
class MariaDbR2dbcSuspendEngineTest : R2dbcSuspendEngines(Database.MARIADB)

@ThroughASuspendFun
class RedisSuspendEngineTest : EngineSuites() {

	private val prefix = "idempotency-test-" + UUID.randomUUID()

	override fun store(clock: Clock): IdempotencyStore = RedisIdempotencyStore(connections, prefix, clock)

	override fun reactiveStore(clock: Clock): ReactiveIdempotencyStore =
		ReactiveRedisIdempotencyStore(connections, prefix, clock)

	companion object {

		private lateinit var connections: LettuceConnectionFactory

		@JvmStatic
		@BeforeAll
		fun connect() {
			connections = RedisConnections.standalone(TestServers.redisUrl())
		}

		@JvmStatic
		@AfterAll
		fun disconnect() = connections.destroy()

	}

}

private const val TABLE = "engine_suites"
