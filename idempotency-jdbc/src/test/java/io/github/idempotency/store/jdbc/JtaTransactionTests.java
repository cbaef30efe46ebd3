package io.github.idempotency.store.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.narayana.NarayanaTransactionIntegration;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionManager;
import org.junit.jupiter.api.AfterEach;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

import com.arjuna.ats.arjuna.common.ObjectStoreEnvironmentBean;
import com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple;
import com.arjuna.ats.jta.UserTransaction;
import com.arjuna.common.internal.util.propertyservice.BeanPopulator;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.internal.DefaultIdempotencyTemplate;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.jta.JtaTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The jdbc store under JTA, as an application server or a Narayana starter runs it: an
 * embedded Narayana transaction manager, Spring's {@link JtaTransactionManager}, and an
 * Agroal pool that enlists its connections in the JTA transaction; each database is a
 * small subclass. No
 * connection of the store's {@code DataSource} is bound when the claim is made; the one
 * the claim takes is enlisted, so the claim joins the JTA transaction as it joins a
 * {@code DataSourceTransactionManager}'s: the writes and the record agree whether it
 * commits, rolls back, commits after a failure the caller caught, or fails to commit, and
 * the record commits finished, however long the transaction ran.
 */
abstract class JtaTransactionTests {

	private static final String TABLE = "idempotency_jta_test";

	private static final Duration LEASE = Duration.ofSeconds(30);

	static {
		// Narayana's transaction log, under target/ rather than the working directory
		String logs = "target/narayana";
		BeanPopulator.getDefaultInstance(ObjectStoreEnvironmentBean.class).setObjectStoreDir(logs);
		BeanPopulator.getNamedInstance(ObjectStoreEnvironmentBean.class, "communicationStore")
			.setObjectStoreDir(logs);
		BeanPopulator.getNamedInstance(ObjectStoreEnvironmentBean.class, "stateStore").setObjectStoreDir(logs);
	}

	private final String workflow = UUID.randomUUID().toString();

	private final AgroalDataSource dataSource;

	private final TransactionTemplate transactions;

	private final MutableClock clock = new MutableClock(Instant.now());

	private final ExecutorService otherInstance = Executors.newSingleThreadExecutor();

	private final JdbcIdempotencyStore store;

	private final IdempotencyEngine engine;

	/** The database, on a pool of its own that does not enlist: to read what committed. */
	private final DataSource database;

	/**
	 * @param database the database on a pool of its own
	 * @param url its JDBC URL, for the enlisting pool
	 * @param platform the schema file's platform
	 */
	JtaTransactionTests(DataSource database, String url, String platform) throws SQLException {
		this.database = database;
		TestDatabases.createTable(database, platform, TABLE);
		JdbcClient.create(database)
			.sql("CREATE TABLE IF NOT EXISTS jta_effect (k VARCHAR(200) NOT NULL)")
			.update();
		TransactionManager manager = com.arjuna.ats.jta.TransactionManager.transactionManager();
		this.dataSource = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
			.connectionPoolConfiguration((pool) -> pool.maxSize(4)
				.transactionIntegration(
						new NarayanaTransactionIntegration(manager, new TransactionSynchronizationRegistryImple()))
				.connectionFactoryConfiguration((factory) -> factory.jdbcUrl(url))));
		JtaTransactionManager jta = new JtaTransactionManager(UserTransaction.userTransaction(), manager);
		jta.afterPropertiesSet();
		this.transactions = new TransactionTemplate(jta);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), this.clock);
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
		this.otherInstance.shutdownNow();
		this.engine.close();
		this.dataSource.close();
	}

	/** How the run is called: on its own, or as the element of a batch. */
	enum Shape {

		SINGLE, BATCH_ELEMENT

	}

	/** A failure the operation records, so that it is replayed rather than run again. */
	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException() {
			super("declined after its write");
		}

	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Shape.class)
	void aRunWhoseJtaTransactionCommitsIsCompletedWithItsWritesAndReplayed(Shape shape) throws Throwable {
		String key = "committed";
		assertThat(deliverInJta(shape, key, null)).isEqualTo("charged " + key);
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(deliverInJta(shape, key, null)).isEqualTo("charged " + key);
		assertThat(effects(key)).isOne();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Shape.class)
	void aRunWhoseJtaTransactionRollsBackLeavesNothingAndRunsAgain(Shape shape) throws Throwable {
		String key = "rolled-back";
		this.transactions.executeWithoutResult((status) -> {
			run(shape, key, null);
			status.setRollbackOnly();
		});
		assertThat(effects(key)).isZero();
		assertThat(this.store.find(id(key))).isEmpty();
		assertThat(deliverInJta(shape, key, null)).isEqualTo("charged " + key);
		assertThat(effects(key)).isOne();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Shape.class)
	void aFailureTheCallerCatchesInAJtaTransactionThatCommitsIsRecordedWithTheWritesAndReplayed(Shape shape)
			throws Throwable {
		String key = "caught";
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> deliverInJta(shape, key, new IllegalStateException("declined after its write")));
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
		assertFailureReplayed(shape,
				() -> deliverInJta(shape, key, new IllegalStateException("declined after its write")));
		assertThat(effects(key)).as("its writes committed once").isOne();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Shape.class)
	void aRecordedFailureWhoseJtaTransactionRollsBackIsStoredAfterTheRollbackAndReplayed(Shape shape)
			throws Throwable {
		String key = "declined";
		assertThatExceptionOfType(CardDeclinedException.class).isThrownBy(() -> this.transactions
			.executeWithoutResult((status) -> run(shape, key, new CardDeclinedException())));
		assertThat(effects(key)).as("rolled back").isZero();
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
		assertFailureReplayed(shape,
				() -> this.transactions.execute((status) -> run(shape, key, new CardDeclinedException())));
		assertThat(effects(key)).as("not run again").isZero();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(Shape.class)
	void aRedeliveryThatMeetsTheRecordAsTheJtaTransactionCommitsFindsItFinishedThoughTheLeaseRanOut(Shape shape) {
		String key = "outlived";
		List<Object> redelivered = new CopyOnWriteArrayList<>();
		this.transactions.executeWithoutResult((status) -> {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public int getOrder() {
					return Ordered.HIGHEST_PRECEDENCE;
				}

				@Override
				public void afterCommit() {
					// first thing after the commit: a redelivery on another instance
					try {
						redelivered.add(JtaTransactionTests.this.otherInstance.submit(() -> run(shape, key, null))
							.get(30, TimeUnit.SECONDS));
					}
					catch (Exception ex) {
						redelivered.add(ex);
					}
				}

			});
			run(shape, key, null);
			// the transaction outlived the claim's lease
			this.clock.advance(LEASE.plusSeconds(1));
		});
		assertThat(redelivered).containsExactly("charged " + key);
		assertThat(effects(key)).as("run once").isOne();
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
	}

	/**
	 * A JTA commit that fails after the run ended, as one does when the flush that JPA
	 * makes before the commit violates a constraint. The record was written in the
	 * transaction and rolls back with the writes: after a result, or a failure the caller
	 * caught, the redelivery runs again rather than replaying what never committed; a
	 * {@code recordFailureFor} failure is stored after the rollback, as when the
	 * transaction rolls back on it, and replayed.
	 */
	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("shapesAndEnds")
	void aRunWhoseJtaCommitFailsAfterItEndedLeavesNothingButARecordedFailure(Shape shape, RunEnd end)
			throws Throwable {
		String key = "commit-failed-" + end;
		assertThatExceptionOfType(UnexpectedRollbackException.class)
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
			assertThat(deliverInJta(shape, key, null)).isEqualTo("charged " + key);
			assertThat(effects(key)).as("run again, once").isOne();
		}
	}

	/** How a run ends before its transaction's commit fails. */
	enum RunEnd {

		RESULT(() -> null), FAILURE_CAUGHT(() -> new IllegalStateException("declined after its write")),
		RECORDED_FAILURE_CAUGHT(CardDeclinedException::new);

		final Supplier<@Nullable RuntimeException> failure;

		RunEnd(Supplier<@Nullable RuntimeException> failure) {
			this.failure = failure;
		}

	}

	static Stream<Arguments> shapesAndEnds() {
		return Stream.of(Shape.values())
			.flatMap((shape) -> Stream.of(RunEnd.values()).map((end) -> Arguments.of(shape, end)));
	}

	/**
	 * Makes the current JTA transaction's commit fail: a synchronization of its own whose
	 * {@code beforeCompletion} throws, where JPA under JTA flushes.
	 */
	private static void failTheCommit() {
		try {
			com.arjuna.ats.jta.TransactionManager.transactionManager()
				.getTransaction()
				.registerSynchronization(new Synchronization() {

					@Override
					public void beforeCompletion() {
						throw new IllegalStateException("The flush before the commit failed (made to fail by the test)");
					}

					@Override
					public void afterCompletion(int status) {
					}

				});
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A read-only JTA transaction is refused as a read-only transaction of the data
	 * source's own is: the claim would have to write in it. Nothing runs, nothing is stored.
	 */
	@ParameterizedTest(name = "{0}")
	@EnumSource(Shape.class)
	void aReadOnlyJtaTransactionRefusesTheClaimAndNothingRuns(Shape shape) {
		TransactionTemplate readOnly = new TransactionTemplate(this.transactions.getTransactionManager());
		readOnly.setReadOnly(true);
		assertThatIllegalStateException().isThrownBy(() -> readOnly.execute((status) -> run(shape, "read-only", null)))
			.withMessageContaining("read-only transaction");
		assertThat(effects("read-only")).isZero();
		assertThat(this.store.find(id("read-only"))).isEmpty();
	}

	/**
	 * Asserts that {@code delivery} met the recorded failure: a single call replays it, a
	 * batch answers its element {@code null} (skipped, as {@code executeAll} documents).
	 */
	private static void assertFailureReplayed(Shape shape, Delivery delivery) throws Throwable {
		if (shape == Shape.SINGLE) {
			assertThatExceptionOfType(IdempotentFailureReplayedException.class).isThrownBy(delivery::deliver);
		}
		else {
			assertThat(delivery.deliver()).as("skipped").isNull();
		}
	}

	/** A delivery that answers, or throws. */
	@FunctionalInterface
	private interface Delivery {

		@Nullable Object deliver() throws Throwable;

	}

	/**
	 * Delivers {@code key} in a JTA transaction that commits, whatever the run does: a
	 * failure is caught inside it and thrown again once it has committed.
	 */
	private Object deliverInJta(Shape shape, String key, @Nullable RuntimeException failure) throws Throwable {
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
	private @Nullable Object run(Shape shape, String key, @Nullable RuntimeException failure) {
		Supplier<String> body = () -> {
			JdbcClient.create(this.dataSource).sql("INSERT INTO jta_effect (k) VALUES (?)").param(effect(key)).update();
			if (failure != null) {
				throw failure;
			}
			return "charged " + key;
		};
		if (shape == Shape.BATCH_ELEMENT) {
			return new DefaultIdempotencyTemplate(this.engine).executeAll(
					List.of(IdempotentRequest.of(this.workflow, key).withRecordFailureFor(CardDeclinedException.class)),
					String.class, (request) -> body.get()).get(0);
		}
		try {
			return this.engine.execute(operation(), key, null, body::get);
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private long effects(String key) {
		return JdbcClient.create(this.database)
			.sql("SELECT count(*) FROM jta_effect WHERE k = ?")
			.param(effect(key))
			.query(Long.class)
			.single();
	}

	private String effect(String key) {
		return this.workflow + "-" + key;
	}

	private IdempotentOperation operation() {
		return this.engine.prepare(OperationDefinition.of(this.workflow, String.class)
			.fingerprinted(false)
			.recordFailureFor(List.of(CardDeclinedException.class))
			.build());
	}

	private RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

}
