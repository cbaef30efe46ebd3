package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.core.EngineSettings;
import io.github.idempotency.core.IdempotencyEngine;
import io.github.idempotency.core.IdempotencyObserver;
import io.github.idempotency.core.IdempotentOperation;
import io.github.idempotency.core.OperationDefinition;
import io.github.idempotency.core.StoreOperation;
import io.github.idempotency.core.StoreUnavailablePolicy;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testsupport.FailedStoreCall;
import io.github.idempotency.testsupport.PostgresServerProcess;
import io.github.idempotency.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The jdbc store on a private PostgreSQL server that the tests crash
 * ({@code pg_ctl stop -m immediate}) and start again: a result or a permanent failure the
 * server could not take while it was down is stored once it is back, so the key never runs
 * twice. Outside a transaction, as a listener without a transaction manager runs.
 */
class PostgresJdbcOutageTest {

	private static final String TABLE = "idempotency_outage";

	private final PostgresServerProcess server = new PostgresServerProcess().start();

	private final HikariDataSource dataSource = new HikariDataSource();

	private final JdbcIdempotencyStore store;

	private final ExecutorService restarter = Executors.newSingleThreadExecutor();

	private final AtomicInteger runs = new AtomicInteger();

	private volatile @Nullable Future<?> restart;

	PostgresJdbcOutageTest() {
		this.dataSource.setJdbcUrl(this.server.url());
		// while the server is down, a connection is refused within a second, not the pool's default 30
		this.dataSource.setConnectionTimeout(1000);
		try {
			TestDatabases.createTable(this.dataSource, "postgresql", TABLE);
		}
		catch (RuntimeException ex) {
			this.dataSource.close();
			this.server.close();
			throw ex;
		}
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), Clock.systemUTC());
	}

	@AfterEach
	void close() throws Exception {
		try {
			if (this.restart != null) {
				// a restart that failed says so here, rather than as a store error at the end of the lease
				this.restart.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			this.restarter.shutdownNow();
			this.dataSource.close();
			this.server.close();
		}
	}

	@Test
	void failClosedThrowsAndRunsNothingWhilePostgresIsDown() {
		try (IdempotencyEngine engine = engine(IdempotencyObserver.NONE)) {
			IdempotentOperation operation = operation(engine);
			this.server.stop();
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> engine.execute(operation, "k1", null, this::charge));
		}
		assertThat(this.runs).hasValue(0);
	}

	@Test
	void aResultNotStoredWhilePostgresIsDownIsStoredOnceItIsBackSoTheKeyNeverRunsTwice() throws Throwable {
		FailedStoreCall completionFailed = new FailedStoreCall(StoreOperation.COMPLETE);
		try (IdempotencyEngine engine = engine(completionFailed)) {
			IdempotentOperation operation = operation(engine);
			Object result = engine.execute(operation, "k1", null, () -> {
				// the claim is committed; the server crashes before the result is stored, and is back once that failed
				crashUntilFailed(completionFailed);
				return charge();
			});
			assertThat(result).isEqualTo("charged 1");
			assertThat(completionFailed.happened()).isTrue();
			assertThat(engine.execute(operation, "k1", null, this::charge)).isEqualTo("charged 1");
		}
		assertThat(this.runs).hasValue(1);
		assertThat(this.store.find(new RecordId("outage", "k1")).orElseThrow().status())
			.isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aPermanentFailureNotRecordedWhilePostgresIsDownIsRecordedOnceItIsBackSoTheRedeliveryReplaysIt()
			throws Throwable {
		FailedStoreCall failureNotRecorded = new FailedStoreCall(StoreOperation.FAIL);
		try (IdempotencyEngine engine = engine(failureNotRecorded)) {
			IdempotentOperation operation = operation(engine);
			assertThatExceptionOfType(CardDeclinedException.class)
				.isThrownBy(() -> engine.execute(operation, "k1", null, () -> {
					crashUntilFailed(failureNotRecorded);
					throw new CardDeclinedException(charge());
				}))
				.withMessage("charged 1")
				.satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
			assertThat(failureNotRecorded.happened()).isTrue();
			assertThatExceptionOfType(IdempotentFailureReplayedException.class)
				.isThrownBy(() -> engine.execute(operation, "k1", null, this::charge))
				.satisfies((ex) -> assertThat(ex.getOriginalMessage()).isEqualTo("charged 1"));
		}
		assertThat(this.runs).hasValue(1);
		assertThat(this.store.find(new RecordId("outage", "k1")).orElseThrow().status())
			.isEqualTo(RecordStatus.FAILED);
	}

	/**
	 * Crashes the server now and starts it again, on another thread, once a store call of
	 * the kind {@code failed} waits for has failed.
	 */
	private void crashUntilFailed(FailedStoreCall failed) {
		this.server.stop();
		this.restart = this.restarter.submit(() -> {
			failed.await();
			return this.server.start();
		});
	}

	private String charge() {
		return "charged " + this.runs.incrementAndGet();
	}

	private IdempotencyEngine engine(IdempotencyObserver observer) {
		return new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				new EngineSettings(Duration.ofSeconds(30), false, Duration.ofHours(1), InProgressPolicy.REJECT,
						Duration.ZERO, StoreUnavailablePolicy.FAIL_CLOSED, 255),
				observer);
	}

	private static IdempotentOperation operation(IdempotencyEngine engine) {
		return engine.prepare(new OperationDefinition("outage", String.class, false, null, null,
				InProgressPolicy.DEFAULT, List.of(CardDeclinedException.class)));
	}

	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

}
