package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.observe.StoreOperation;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testfixtures.FailedStoreCall;
import io.github.idempotency.testservers.PostgresOutage;
import io.github.idempotency.testservers.TestDatabases;

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

	private final PostgresOutage outage = new PostgresOutage();

	private final JdbcIdempotencyStore store;

	private final AtomicInteger runs = new AtomicInteger();

	PostgresJdbcOutageTest() throws Exception {
		try {
			TestDatabases.createTable(this.outage.dataSource(), "postgresql", TABLE);
		}
		catch (RuntimeException ex) {
			this.outage.close();
			throw ex;
		}
		this.store = new JdbcIdempotencyStore(this.outage.dataSource(), TABLE, Duration.ofSeconds(5),
				Clock.systemUTC());
	}

	@AfterEach
	void close() throws Exception {
		this.outage.close();
	}

	@Test
	void failClosedThrowsAndRunsNothingWhilePostgresIsDown() {
		try (IdempotencyEngine engine = engine(IdempotencyObserver.NONE)) {
			IdempotentOperation operation = operation(engine);
			AtomicBoolean over = new AtomicBoolean();
			this.outage.begin(over::get);
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> engine.execute(operation, "k1", null, this::charge));
			over.set(true);
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
				this.outage.begin(completionFailed::happened);
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
					this.outage.begin(failureNotRecorded::happened);
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

	private String charge() {
		return "charged " + this.runs.incrementAndGet();
	}

	private IdempotencyEngine engine(IdempotencyObserver observer) {
		return new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseRenewal(false)
						.retention(Duration.ofHours(1))
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ZERO)
						.build(),
				observer);
	}

	private static IdempotentOperation operation(IdempotencyEngine engine) {
		return engine.prepare(OperationDefinition.of("outage", String.class)
			.fingerprinted(false)
			.recordFailureFor(List.of(CardDeclinedException.class))
			.build());
	}

	static final class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

}
