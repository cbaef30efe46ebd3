package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.RedeliveryRequested;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Inside the caller's transaction a {@code void} operation's claim writes its record
 * already finished: the whole cost is one statement, and a failure still settles the
 * record with the transaction — on PostgreSQL, in a table of its own, counting the
 * statements sent.
 */
class PostgresJdbcVoidInTransactionTest {

	private static final String TABLE = "idempotency_void_tx_test";

	private final StatementCounter dataSource = new StatementCounter(TestDatabases.postgres());

	private final TransactionTemplate transactions = new TransactionTemplate(
			new DataSourceTransactionManager(this.dataSource));

	private final JdbcIdempotencyStore store;

	private final IdempotencyEngine engine;

	private final String prefix = UUID.randomUUID().toString();

	PostgresJdbcVoidInTransactionTest() {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
		this.engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder().retention(Duration.ofDays(1)).waitTimeout(Duration.ofSeconds(20)).build(),
				IdempotencyObserver.NONE);
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aFirstDeliveryIsOneStatementAndCommitsTheRecordFinished() {
		AtomicInteger runs = new AtomicInteger();
		int statements = inTransaction(() -> this.engine.execute(operation(), key("1"), null, () -> {
			runs.incrementAndGet();
			return null;
		}));
		assertThat(statements).isOne();
		assertThat(runs).hasValue(1);
		assertThat(record("1").status()).isEqualTo(RecordStatus.COMPLETED);
		inTransaction(() -> this.engine.execute(operation(), key("1"), null, () -> runs.incrementAndGet()));
		assertThat(runs).hasValue(1);
	}

	@Test
	void aRedeliveryAskedForInATransactionThatCommitsLeavesNoRecordSoTheRedeliveryRuns() {
		AtomicInteger runs = new AtomicInteger();
		inTransaction(() -> this.engine.execute(operation(), key("1"), null, () -> {
			runs.incrementAndGet();
			// a listener that nacked its message and returned: its adapter says so
			throw new RedeliveryRequested(0, null);
		}));
		assertThat(this.store.find(new RecordId("void-tx", key("1")))).isEmpty();
		inTransaction(() -> this.engine.execute(operation(), key("1"), null, () -> runs.incrementAndGet()));
		assertThat(runs).hasValue(2);
		assertThat(record("1").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aRollbackLeavesNoRecord() {
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> inTransaction(
				() -> this.engine.execute(operation(), key("1"), null, () -> {
					throw new IllegalStateException("card network down");
				})));
		assertThat(this.store.find(new RecordId("void-tx", key("1")))).isEmpty();
	}

	@Test
	void aFailureTheTransactionCommitsAllTheSameIsRecordedSoItsWritesAreNotMadeTwice() {
		inTransaction(() -> {
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> this.engine.execute(operation(), key("1"), null, () -> {
					throw new IllegalStateException("retry me");
				}));
			return null;
		});
		assertThat(record("1").status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record("1").errorMessage()).isEqualTo("retry me");
	}

	@Test
	void aPermanentFailureTheTransactionSurvivesIsRecordedAndReplayed() {
		IdempotentOperation permanent = this.engine.prepare(OperationDefinition.of("void-tx", void.class)
			.fingerprinted(false)
			.recordFailureFor(List.of(IllegalArgumentException.class))
			.build());
		inTransaction(() -> {
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> this.engine.execute(permanent, key("1"), null, () -> {
					throw new IllegalArgumentException("card declined");
				}));
			return null;
		});
		assertThat(record("1").status()).isEqualTo(RecordStatus.FAILED);
		assertThatExceptionOfType(IdempotentFailureReplayedException.class)
			.isThrownBy(() -> inTransaction(() -> this.engine.execute(permanent, key("1"), null, () -> null)))
			.withMessageContaining("card declined");
	}

	@Test
	void aRecoveryPointIsSavedOnTheFinishedRecord() {
		inTransaction(() -> this.engine.execute(operation(), key("1"), null, () -> {
			IdempotencyContext.current().saveRecoveryPoint("stock-reserved");
			return null;
		}));
		assertThat(record("1").recoveryPoint()).isEqualTo("stock-reserved");
		assertThat(record("1").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void racingDuplicatesRunEachKeyOnce() throws Exception {
		List<String> deliveries = new ArrayList<>();
		for (int key = 0; key < 50; key++) {
			for (int copy = 0; copy < 4; copy++) {
				deliveries.add(key(String.valueOf(key)));
			}
		}
		Collections.shuffle(deliveries);
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		ExecutorService executor = Executors.newFixedThreadPool(12);
		try {
			List<Future<?>> results = new ArrayList<>();
			for (String key : deliveries) {
				results.add(executor.submit(() -> inTransaction(() -> this.engine.execute(operation(), key, null,
						() -> runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet()))));
			}
			for (Future<?> result : results) {
				result.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(runs).hasSize(50);
		assertThat(runs.values()).allSatisfy((count) -> assertThat(count).hasValue(1));
	}

	private IdempotentOperation operation() {
		return this.engine.prepare(OperationDefinition.of("void-tx", void.class)
			.fingerprinted(false)
			.build());
	}

	/**
	 * Runs {@code call} in a transaction on the store's data source.
	 * @return how many statements the transaction sent
	 */
	private int inTransaction(IdempotencyEngine.Action call) {
		Integer statements = this.transactions.execute((status) -> {
			int before = this.dataSource.statements.get();
			try {
				call.proceed();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
			return this.dataSource.statements.get() - before;
		});
		return (statements != null) ? statements : -1;
	}

	private String key(String suffix) {
		return this.prefix + "-" + suffix;
	}

	private io.github.idempotency.store.IdempotencyRecord record(String suffix) {
		return this.store.find(new RecordId("void-tx", key(suffix))).orElseThrow();
	}

}
