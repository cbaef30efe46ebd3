package io.github.idempotency.store.redis;

import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.JavaShape;
import io.github.idempotency.observe.IdempotencyObserver;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A run inside a transaction its store does not take part in (redis, memory) is settled
 * once that transaction has ended, on real PostgreSQL transactions: a record never says
 * "done" for writes that did not commit. The commit is made to fail by a deferred unique
 * constraint, which PostgreSQL checks only at the commit.
 */
class RedisSettleAfterTheTransactionTest {

	private static final String WORKFLOW = "payment";

	private static final String CHARGES = "settle_after_commit_charges";

	private static DataSource dataSource;

	private static JdbcClient jdbc;

	private static LettuceConnectionFactory redis;

	private final TransactionTemplate transaction = new TransactionTemplate(
			new DataSourceTransactionManager(dataSource));

	private final AtomicInteger runs = new AtomicInteger();

	private @Nullable IdempotencyEngine engine;

	@BeforeAll
	static void createTable() {
		dataSource = TestDatabases.postgres();
		jdbc = JdbcClient.create(dataSource);
		jdbc.sql("DROP TABLE IF EXISTS " + CHARGES).update();
		jdbc.sql("CREATE TABLE " + CHARGES + " (ref TEXT NOT NULL, CONSTRAINT " + CHARGES
				+ "_ref UNIQUE (ref) DEFERRABLE INITIALLY DEFERRED)").update();
		redis = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void dropTable() {
		jdbc.sql("DROP TABLE IF EXISTS " + CHARGES).update();
		redis.destroy();
	}

	@AfterEach
	void closeEngine() {
		if (this.engine != null) {
			this.engine.close();
		}
	}

	static Stream<Arguments> storesAndShapes() {
		Function<Clock, IdempotencyStore> memory = MemoryIdempotencyStore::new;
		Function<Clock, IdempotencyStore> redisStore = (clock) -> new RedisIdempotencyStore(redis,
				"idempotency-test-" + UUID.randomUUID(), clock);
		return Stream.of(JavaShape.SINGLE, JavaShape.BATCH_ELEMENT)
			.flatMap((shape) -> Stream.of(Arguments.of("memory", memory, shape), Arguments.of("redis", redisStore, shape)));
	}

	/** How a run ends before its transaction's commit fails. */
	enum RunEnd {

		RESULT, FAILURE_CAUGHT, RECORDED_FAILURE_CAUGHT

	}

	static Stream<Arguments> storesShapesAndEnds() {
		return storesAndShapes().flatMap((arguments) -> Stream.of(RunEnd.values()).map((end) -> {
			Object[] values = arguments.get();
			return Arguments.of(values[0], values[1], values[2], end);
		}));
	}

	/**
	 * A commit that fails after the run ended: its outcome unknown, settled as a rollback.
	 * After a result, or a failure the caller caught, the key is given back and the
	 * redelivery runs again; a {@code recordFailureFor} failure is recorded and replayed.
	 */
	@ParameterizedTest(name = "{0} {2} {3}")
	@MethodSource("storesShapesAndEnds")
	void aCommitThatFailsAfterTheRunEndedLeavesNothingButARecordedFailure(String name,
			Function<Clock, IdempotencyStore> stores, JavaShape shape, RunEnd end) {
		IdempotencyStore store = stores.apply(Clock.systemUTC());
		String key = "k-" + UUID.randomUUID();
		AtomicBoolean poison = new AtomicBoolean(true);
		@Nullable RuntimeException failure = switch (end) {
			case RESULT -> null;
			case FAILURE_CAUGHT -> new IllegalStateException("declined after its write");
			case RECORDED_FAILURE_CAUGHT -> new CardDeclinedException();
		};
		assertThatException().isThrownBy(() -> charge(store, shape, key, poison, failure))
			.isInstanceOf(TransactionSystemException.class);
		assertThat(charges(key)).isZero();
		poison.set(false);
		if (end == RunEnd.RECORDED_FAILURE_CAUGHT) {
			assertThat(record(store, key).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
			if (shape.skipsRefusals()) {
				assertThat(charge(store, shape, key, poison, null)).as("skipped").isNull();
			}
			else {
				assertThatExceptionOfType(IdempotentFailureReplayedException.class)
					.isThrownBy(() -> charge(store, shape, key, poison, null));
			}
			assertThat(this.runs).as("not run again").hasValue(1);
			return;
		}
		assertThat(store.find(new RecordId(WORKFLOW, key))).isEmpty();
		assertThat(charge(store, shape, key, poison, null)).isEqualTo("charged " + key);
		assertThat(record(store, key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(charge(store, shape, key, poison, null)).isEqualTo("charged " + key);
		assertThat(charges(key)).isOne();
		assertThat(this.runs).hasValue(2);
	}

	/** A failure the operation records, so that it is replayed rather than run again. */
	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException() {
			super("declined after its write");
		}

	}

	@ParameterizedTest(name = "{0} {2}")
	@MethodSource("storesAndShapes")
	void theRecordSaysCompletedOnlyOnceTheTransactionHasCommitted(String name, Function<Clock, IdempotencyStore> stores,
			JavaShape shape) {
		IdempotencyStore store = stores.apply(Clock.systemUTC());
		String key = "k-" + UUID.randomUUID();
		AtomicReference<@Nullable RecordStatus> beforeCommit = new AtomicReference<>();
		this.transaction.executeWithoutResult((status) -> call(store, shape, key, () -> {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void beforeCommit(boolean readOnly) {
					beforeCommit.set(record(store, key).map(IdempotencyRecord::status).orElse(null));
				}

			});
			return "charged " + key;
		}));
		assertThat(beforeCommit).hasValue(RecordStatus.IN_PROGRESS);
		assertThat(record(store, key).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
	}

	/**
	 * Charges {@code key} in a transaction: the run writes the charge (twice while
	 * {@code poison} is set, which fails the commit), then throws {@code failure}, if any,
	 * which the caller catches inside the transaction.
	 */
	private @Nullable Object charge(IdempotencyStore store, JavaShape shape, String key, AtomicBoolean poison,
			@Nullable RuntimeException failure) {
		return this.transaction.execute((status) -> {
			try {
				return call(store, shape, key, () -> {
					this.runs.incrementAndGet();
					jdbc.sql("INSERT INTO " + CHARGES + " (ref) VALUES (?)").param(key).update();
					if (poison.get()) {
						// passes now, fails the commit
						jdbc.sql("INSERT INTO " + CHARGES + " (ref) VALUES (?)").param(key).update();
					}
					if (failure != null) {
						throw failure;
					}
					return "charged " + key;
				});
			}
			catch (RuntimeException ex) {
				if (ex != failure) {
					throw ex;
				}
				return null;
			}
		});
	}

	private @Nullable Object call(IdempotencyStore store, JavaShape shape, String key,
			java.util.function.Supplier<@Nullable Object> body) {
		if (this.engine == null || this.engine.store() != store) {
			closeEngine();
			this.engine = new IdempotencyEngine(store, JsonMapper.builder().build(), EngineSettings.defaults(),
					IdempotencyObserver.NONE);
		}
		try {
			return shape.call(this.engine,
					shape.prepare(this.engine, WORKFLOW, String.class, List.of(CardDeclinedException.class)), key, body);
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static Optional<IdempotencyRecord> record(IdempotencyStore store, String key) {
		return store.find(new RecordId(WORKFLOW, key));
	}

	private static int charges(String key) {
		return jdbc.sql("SELECT count(*) FROM " + CHARGES + " WHERE ref = ?").param(key).query(Integer.class).single();
	}

}
