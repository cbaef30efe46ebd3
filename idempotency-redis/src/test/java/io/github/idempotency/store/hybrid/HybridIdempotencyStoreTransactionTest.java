package io.github.idempotency.store.hybrid;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.internal.JavaShape;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The hybrid store inside the caller's transaction (PostgreSQL and Redis): Redis learns of
 * a record only once its transaction committed, and never of one rolled back.
 */
class HybridIdempotencyStoreTransactionTest {

	private static LettuceConnectionFactory connectionFactory;

	private final DataSource dataSource = TestDatabases.postgres();

	private final TransactionTemplate transactions = new TransactionTemplate(
			new DataSourceTransactionManager(this.dataSource));

	private final HybridIdempotencyStore store = new HybridIdempotencyStore(
			new JdbcIdempotencyStore(this.dataSource, "idempotency_record", Duration.ofSeconds(5),
					new MutableClock(Instant.now())),
			connectionFactory, "hybrid-tx",
			Duration.ofHours(1), new MutableClock(Instant.now()));

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
			EngineSettings.builder().retention(Duration.ofDays(1)).waitTimeout(Duration.ofSeconds(5)).build(),
			IdempotencyObserver.NONE);

	private final IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("hybrid-tx", String.class)
		.fingerprinted(false)
		.build());

	private final String key = UUID.randomUUID().toString();

	private final AtomicInteger runs = new AtomicInteger();

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
		JdbcClient.create(TestDatabases.postgres()).sql("DROP TABLE IF EXISTS hybrid_tx_poison").update();
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aKeyDeliveredTwiceInATransactionThatRollsBackRunsAgainOnRedelivery() {
		this.transactions.executeWithoutResult((status) -> {
			assertThat(charge()).isEqualTo(charge());
			status.setRollbackOnly();
		});
		assertThat(cached()).isFalse();
		assertThat(this.store.find(new RecordId("hybrid-tx", this.key))).isEmpty();
		charge();
		assertThat(this.runs).hasValue(2);
	}

	@Test
	void aRecordCompletedInATransactionIsCachedOnlyAfterTheCommit() {
		this.transactions.executeWithoutResult((status) -> {
			charge();
			assertThat(cached()).as("cached before the commit").isFalse();
		});
		assertThat(cached()).isTrue();
		charge();
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aReadOnlyTransactionRefusesTheClaim() {
		TransactionTemplate readOnly = new TransactionTemplate(this.transactions.getTransactionManager());
		readOnly.setReadOnly(true);
		assertThatIllegalStateException().isThrownBy(() -> readOnly.executeWithoutResult((status) -> charge()))
			.withMessageContaining("read-only transaction");
		assertThat(this.runs).hasValue(0);
		assertThat(cached()).isFalse();
		assertThat(this.store.find(new RecordId("hybrid-tx", this.key))).isEmpty();
	}

	/**
	 * A commit that fails after the run returned (PostgreSQL checks a deferred unique
	 * constraint only then): the record went with the writes, Redis never learns of it,
	 * and the redelivery runs again; a single call and a batch element.
	 */
	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aRecordWhoseCommitFailsIsNeverCachedAndTheRedeliveryRunsAgain(JavaShape shape) throws Throwable {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		jdbc.sql("CREATE TABLE IF NOT EXISTS hybrid_tx_poison (ref TEXT NOT NULL, CONSTRAINT hybrid_tx_poison_ref "
				+ "UNIQUE (ref) DEFERRABLE INITIALLY DEFERRED)").update();
		IdempotentOperation operation = shape.prepare(this.engine, "hybrid-tx", String.class, List.of());
		assertThatExceptionOfType(TransactionSystemException.class)
			.isThrownBy(() -> this.transactions.executeWithoutResult((status) -> {
				try {
					shape.call(this.engine, operation, this.key, () -> "receipt-" + this.runs.incrementAndGet());
				}
				catch (Throwable ex) {
					throw new IllegalStateException(ex);
				}
				// passes now, fails the commit
				jdbc.sql("INSERT INTO hybrid_tx_poison (ref) VALUES (?), (?)").params(this.key, this.key).update();
			}));
		assertThat(cached()).as("cached though its commit failed").isFalse();
		assertThat(this.store.find(new RecordId("hybrid-tx", this.key))).isEmpty();
		assertThat(shape.call(this.engine, operation, this.key, () -> "receipt-" + this.runs.incrementAndGet()))
			.isEqualTo("receipt-2");
		assertThat(cached()).isTrue();
	}

	private String charge() {
		try {
			return (String) this.engine.execute(this.operation, this.key, null,
					() -> "receipt-" + this.runs.incrementAndGet());
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private boolean cached() {
		return Boolean.TRUE.equals(new StringRedisTemplate(connectionFactory)
			.hasKey(this.store.key(new RecordId("hybrid-tx", this.key))));
	}

}
