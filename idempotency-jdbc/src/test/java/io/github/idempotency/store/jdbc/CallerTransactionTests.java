package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.JavaShape;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The engine on the jdbc store inside the caller's transaction, run as a single call and
 * as the element of a batch (the synchronous {@link JavaShape}s: an asynchronous result is
 * refused inside a transaction): the operation writes its effect on the store's
 * {@code DataSource}, in the same transaction. Each transaction manager is a subclass
 * that says how its commit is made to fail; the case of a failed commit is written here
 * once for all of them.
 */
abstract class CallerTransactionTests {

	static final String TABLE = "idempotency_caller_tx_test";

	static final Duration LEASE = Duration.ofSeconds(30);

	final String workflow = UUID.randomUUID().toString();

	final MutableClock clock = new MutableClock(Instant.now());

	/** The store's data source, on which the operation writes its effect. */
	final DataSource dataSource;

	final TransactionTemplate transactions;

	final JdbcIdempotencyStore store;

	final IdempotencyEngine engine;

	/** The database, on a pool of its own: to read what committed. */
	private final DataSource database;

	/**
	 * @param database the database on a pool of its own
	 * @param platform the schema file's platform
	 * @param dataSource the store's data source
	 * @param transactionManager the transaction manager of the caller's transactions, given
	 * the store's data source
	 */
	CallerTransactionTests(DataSource database, String platform, DataSource dataSource,
			Function<DataSource, PlatformTransactionManager> transactionManager) {
		this.database = database;
		TestDatabases.createTable(database, platform, TABLE);
		JdbcClient.create(database).sql("CREATE TABLE IF NOT EXISTS tx_effect (k VARCHAR(200) NOT NULL)").update();
		this.dataSource = dataSource;
		this.transactions = new TransactionTemplate(transactionManager.apply(dataSource));
		this.store = new JdbcIdempotencyStore(dataSource, TABLE, Duration.ofSeconds(5), this.clock);
		this.engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
					.leaseTtl(LEASE)
					.leaseRenewal(false)
					.retention(Duration.ofDays(1))
					.waitTimeout(Duration.ZERO)
					.build(),
				IdempotencyObserver.NONE);
	}

	@AfterEach
	void close() {
		this.engine.close();
		closeDataSource();
	}

	/**
	 * Closes what the subclass opened for the store's data source, once the engine is
	 * closed.
	 */
	void closeDataSource() {
	}

	/**
	 * Makes the commit of the current transaction fail, the transaction rolled back.
	 */
	abstract void failTheCommit();

	/** How a run ends before its transaction's commit. */
	enum RunEnd {

		RESULT(() -> null), FAILURE_CAUGHT(() -> new IllegalStateException("declined after its write")),
		RECORDED_FAILURE_CAUGHT(CardDeclinedException::new);

		final Supplier<@Nullable RuntimeException> failure;

		RunEnd(Supplier<@Nullable RuntimeException> failure) {
			this.failure = failure;
		}

	}

	/** A failure the operation records, so that it is replayed rather than run again. */
	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException() {
			super("declined after its write");
		}

	}

	static Stream<Arguments> shapesAndEnds() {
		return Stream.of(JavaShape.SINGLE, JavaShape.BATCH_ELEMENT)
			.flatMap((shape) -> Stream.of(RunEnd.values()).map((end) -> Arguments.of(shape, end)));
	}

	/**
	 * A commit that fails after the run ended, as one does when the server aborts the
	 * transaction at its commit, or when the flush that JPA makes before it violates a
	 * constraint. The record was written in the transaction and rolls back with the
	 * writes: after a result, or a failure the caller caught, the redelivery runs again
	 * rather than replaying what never committed; a {@code recordFailureFor} failure is
	 * stored after the rollback, as when the transaction rolls back on it, and replayed.
	 */
	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("shapesAndEnds")
	void aRunWhoseCommitFailsAfterItEndedLeavesNothingButARecordedFailure(JavaShape shape, RunEnd end) throws Throwable {
		String key = "commit-failed-" + end;
		assertThatExceptionOfType(TransactionException.class)
			.isThrownBy(() -> this.transactions.executeWithoutResult((status) -> {
				failTheCommit();
				try {
					run(shape, key, end.failure.get());
				}
				catch (RuntimeException ex) {
					// caught by the caller: the transaction goes on to its commit
				}
			}));
		assertThat(effects(key)).as("rolled back").isZero();
		if (end == RunEnd.RECORDED_FAILURE_CAUGHT) {
			assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
			assertFailureReplayed(shape,
					() -> this.transactions.execute((status) -> run(shape, key, new CardDeclinedException())));
			assertThat(effects(key)).as("not run again").isZero();
		}
		else {
			assertThat(this.store.find(id(key))).as("the record rolled back with the writes").isEmpty();
			assertThat(deliverInTransaction(shape, key, null)).isEqualTo("charged " + key);
			assertThat(effects(key)).as("run again, once").isOne();
		}
	}

	/**
	 * Asserts that {@code delivery} met the recorded failure: a single call replays it, a
	 * batch answers its element {@code null} (skipped, as {@code executeAll} documents).
	 */
	static void assertFailureReplayed(JavaShape shape, Delivery delivery) throws Throwable {
		if (!shape.skipsRefusals()) {
			assertThatExceptionOfType(IdempotentFailureReplayedException.class).isThrownBy(delivery::deliver);
		}
		else {
			assertThat(delivery.deliver()).as("skipped").isNull();
		}
	}

	/** A delivery that answers, or throws. */
	@FunctionalInterface
	interface Delivery {

		@Nullable Object deliver() throws Throwable;

	}

	/**
	 * Delivers {@code key} in a transaction that commits, whatever the run does: a failure
	 * is caught inside it and thrown again once it has committed.
	 */
	Object deliverInTransaction(JavaShape shape, String key, @Nullable RuntimeException failure) throws Throwable {
		Throwable[] caught = new Throwable[1];
		Object result = this.transactions.execute((status) -> {
			try {
				return run(shape, key, failure);
			}
			catch (Throwable ex) {
				caught[0] = ex;
				return null;
			}
		});
		if (caught[0] != null) {
			throw caught[0];
		}
		return result;
	}

	/**
	 * Runs the operation of {@code key}, called as {@code shape} says: it writes its
	 * effect, then throws {@code failure}, if any, or returns its result.
	 */
	@Nullable Object run(JavaShape shape, String key, @Nullable RuntimeException failure) {
		try {
			return shape.call(this.engine, operation(shape), key, () -> {
				JdbcClient.create(this.dataSource)
					.sql("INSERT INTO tx_effect (k) VALUES (?)")
					.param(effect(key))
					.update();
				if (failure != null) {
					throw failure;
				}
				return "charged " + key;
			});
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	long effects(String key) {
		return JdbcClient.create(this.database)
			.sql("SELECT count(*) FROM tx_effect WHERE k = ?")
			.param(effect(key))
			.query(Long.class)
			.single();
	}

	private String effect(String key) {
		return this.workflow + "-" + key;
	}

	private IdempotentOperation operation(JavaShape shape) {
		return shape.prepare(this.engine, this.workflow, String.class, List.of(CardDeclinedException.class));
	}

	RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

}
