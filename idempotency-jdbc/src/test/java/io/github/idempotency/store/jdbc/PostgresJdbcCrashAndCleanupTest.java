package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A crashed consumer's claim is taken over and its late completion refused; expired rows
 * are cleaned up in batches — on PostgreSQL, in a table of their own.
 */
class PostgresJdbcCrashAndCleanupTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final DataSource dataSource = TestDatabases.postgres();

	private final MutableClock clock = new MutableClock(Instant.parse("2030-01-01T00:00:00Z"));

	private final JdbcIdempotencyStore store;

	private final IdempotencyEngine engine;

	PostgresJdbcCrashAndCleanupTest() {
		TestDatabases.createTable(this.dataSource, "postgresql", "idempotency_crash_test");
		this.store = new JdbcIdempotencyStore(this.dataSource, "idempotency_crash_test", Duration.ofSeconds(5),
				this.clock);
		this.engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseTtl(LEASE)
						.leaseRenewal(false)
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ofSeconds(1))
						.build(),
				IdempotencyObserver.NONE);
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aDeadOwnersClaimIsTakenOverWithItsRecoveryPointAndItsLateCompletionIsRefused() throws Throwable {
		IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("order", String.class)
			.fingerprinted(false)
			.build());
		CountDownLatch crashed = new CountDownLatch(1);
		CountDownLatch wakeUp = new CountDownLatch(1);
		CompletableFuture<Object> deadOwner = CompletableFuture.supplyAsync(() -> {
			try {
				return this.engine.execute(operation, "o-1", null, () -> {
					IdempotencyContext.current().saveRecoveryPoint("stock-reserved");
					crashed.countDown();
					wakeUp.await();
					return "late";
				});
			}
			catch (Throwable ex) {
				return ex;
			}
		});
		assertThat(crashed.await(10, TimeUnit.SECONDS)).isTrue();
		this.clock.advance(LEASE.plusSeconds(1));
		Object redelivery = this.engine.execute(operation, "o-1", null,
				() -> "attempt " + IdempotencyContext.current().attempt() + " from "
						+ IdempotencyContext.current().recoveryPoint().orElseThrow());
		assertThat(redelivery).isEqualTo("attempt 2 from stock-reserved");
		wakeUp.countDown();
		assertThat(deadOwner.get(10, TimeUnit.SECONDS)).isInstanceOf(IdempotencyLeaseLostException.class);
		assertThat(this.store.find(new RecordId("order", "o-1")).orElseThrow().response())
			.isEqualTo("\"attempt 2 from stock-reserved\"");
	}

	@Test
	void aRowAnotherTransactionHoldsIsInProgressAfterTheLockTimeout() throws Exception {
		JdbcIdempotencyStore impatient = new JdbcIdempotencyStore(this.dataSource, "idempotency_crash_test",
				Duration.ofMillis(300), this.clock);
		try (java.sql.Connection holder = this.dataSource.getConnection()) {
			holder.setAutoCommit(false);
			JdbcContentionTests.inHeldTransaction(holder, "idempotency_crash_test", this.clock, (held) -> held
				.claim(new ClaimRequest(new RecordId("held", "k1"), "holder", null, LEASE, Duration.ofDays(1))));
			long start = System.nanoTime();
			assertThat(impatient
				.claim(new ClaimRequest(new RecordId("held", "k1"), "other", null, LEASE, Duration.ofDays(1)))
				.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(250),
					Duration.ofSeconds(3));
			holder.commit();
		}
		assertThat(impatient
			.claim(new ClaimRequest(new RecordId("held", "k1"), "other", null, LEASE, Duration.ofDays(1)))
			.record()
			.owner()).isEqualTo("holder");
	}

	@Test
	void aClaimInTheCallersTransactionLeavesItsLockTimeoutAsItWas() {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		String lockTimeout = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource))
			.execute((status) -> {
				jdbc.sql("SET LOCAL lock_timeout = '7s'").update();
				for (String key : List.of("new", "new")) {
					this.store.claim(
							new ClaimRequest(new RecordId("joined", key), "me", null, LEASE, Duration.ofDays(1)));
				}
				return jdbc.sql("SHOW lock_timeout").query(String.class).single();
			});
		assertThat(lockTimeout).isEqualTo("7s");
		assertThat(this.store.find(new RecordId("joined", "new"))).isPresent();
	}

	@Test
	void cleanupDeletesOnlyExpiredRowsInBatches() {
		// a claim is kept for its lease plus the retention, so a crashed run can still be taken over
		for (int i = 0; i < 5; i++) {
			claim("finished-" + i, Duration.ofHours(1)).acquiredHandle().complete("1");
		}
		claim("crashed");
		this.clock.advance(Duration.ofHours(2));
		claim("running");
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("jdbc", () -> this.store.deleteExpired(2),
				Duration.ofHours(1));
		assertThat(cleaner.cleanUp()).isEqualTo(5);
		assertThat(rows()).containsExactlyInAnyOrder("crashed", "running");
		assertThat(this.store.find(new RecordId("cleanup", "running")).orElseThrow().status())
			.isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(cleaner.cleanUp()).isZero();
	}

	@Test
	void scheduledCleanupRunsUntilStopped() {
		claim("old", Duration.ofMinutes(1)).acquiredHandle().complete("1");
		this.clock.advance(Duration.ofHours(1));
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("jdbc", () -> this.store.deleteExpired(10),
				Duration.ofMillis(50));
		cleaner.start();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> rows().isEmpty());
		}
		finally {
			cleaner.stop();
		}
		assertThat(cleaner.isRunning()).isFalse();
	}

	private ClaimResult claim(String key) {
		return claim(key, Duration.ofDays(1));
	}

	private ClaimResult claim(String key, Duration retention) {
		ClaimResult claim = this.store
			.claim(new ClaimRequest(new RecordId("cleanup", key), "owner", null, LEASE, retention));
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		return claim;
	}

	private List<String> rows() {
		return JdbcClient.create(this.dataSource)
			.sql("SELECT idempotency_key FROM idempotency_crash_test")
			.query(String.class)
			.list();
	}

}
