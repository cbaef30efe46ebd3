package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * On MariaDB a batch outside a transaction is claimed with one statement (an insert that
 * answers the rows it found), or, while its workflow reads first, with one read and one
 * insert of the rows it did not find (a batch of duplicates with the read alone); and
 * completed with one statement in one transaction, committed once; a batch in the
 * caller's transaction is completed with one statement too — counting the statements
 * prepared and the commits, in a table of its own.
 */
class MariaDbJdbcBatchStatementsTest {

	private static final String TABLE = "idempotency_batch_statements_test";

	private final StatementCounter dataSource = new StatementCounter(TestDatabases.mariaDb());

	private final JdbcIdempotencyStore store;

	private final String prefix = UUID.randomUUID().toString();

	MariaDbJdbcBatchStatementsTest() {
		TestDatabases.createTable(TestDatabases.mariaDb(), "mysql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
	}

	@Test
	void aBatchIsClaimedWithOneStatementAndCompletedWithOneBatchCommittedOnce() {
		List<ClaimResult> claims = new ArrayList<>();
		assertThat(this.dataSource.during(() -> claims.addAll(claimAll("a", "b", "c", "d")))).isOne();
		assertThat(claims).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
		List<Boolean> completed = new ArrayList<>();
		int commits = this.dataSource.commits.get();
		assertThat(this.dataSource.during(
				() -> completed.addAll(this.store.completeAll(handles, List.of("\"a\"", "\"b\"", "\"c\"", "\"d\"")))))
			.isOne();
		assertThat(this.dataSource.commits.get() - commits).as("one commit for the batch's completions").isOne();
		assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 1))
			.as("one multi-table update, not a JDBC batch of single ones")
			.startsWith("UPDATE (SELECT ").contains(" u STRAIGHT_JOIN " + TABLE + " t ");
		assertThat(completed).containsOnly(true);
		List<ClaimResult> mixed = new ArrayList<>();
		assertThat(this.dataSource.during(() -> mixed.addAll(claimAll("b", "e", "c")))).isOne();
		assertThat(mixed).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE);
		assertThat(mixed.get(2).record().response()).isEqualTo("\"c\"");
		assertThat(this.store.find(mixed.get(1).record().id()).orElseThrow().owner())
			.isEqualTo(mixed.get(1).record().owner());
	}

	@Test
	void aBatchInACallersTransactionIsCompletedWithOneStatement() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		List<ClaimResult> claims = new ArrayList<>();
		List<Boolean> completed = new ArrayList<>();
		int statements = transactions.execute((status) -> {
			claims.addAll(claimAll("tx-a", "tx-b", "tx-c"));
			List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
			return this.dataSource
				.during(() -> completed.addAll(this.store.completeAll(handles, List.of("\"a\"", "\"b\"", "\"c\""))));
		});
		assertThat(statements).isOne();
		assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 1))
			.as("one multi-table update, not a JDBC batch of single ones")
			.startsWith("UPDATE (SELECT ");
		assertThat(completed).containsExactly(true, true, true);
		assertThat(this.store.find(claims.get(1).record().id()).orElseThrow()).satisfies((record) -> {
			assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(record.response()).isEqualTo("\"b\"");
		});
	}

	@Test
	void aBatchInACallersTransactionOneOfWhoseClaimsASavepointRolledBackAnswersEachCompletion() {
		DataSourceTransactionManager manager = new DataSourceTransactionManager(this.dataSource);
		TransactionTemplate nested = new TransactionTemplate(manager);
		nested.setPropagationBehavior(TransactionTemplate.PROPAGATION_NESTED);
		List<ClaimResult> claims = new ArrayList<>();
		List<Boolean> completed = new TransactionTemplate(manager).execute((status) -> {
			claims.addAll(claimAll("kept-a"));
			nested.executeWithoutResult((savepoint) -> {
				claims.addAll(claimAll("rolled-back-b"));
				savepoint.setRollbackOnly();
			});
			claims.addAll(claimAll("kept-c"));
			List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
			return this.store.completeAll(handles, List.of("\"a\"", "\"b\"", "\"c\""));
		});
		assertThat(completed).containsExactly(true, false, true);
		assertThat(this.store.find(claims.get(0).record().id()).orElseThrow().response()).isEqualTo("\"a\"");
		assertThat(this.store.find(claims.get(1).record().id())).isEmpty();
		assertThat(this.store.find(claims.get(2).record().id()).orElseThrow().response()).isEqualTo("\"c\"");
	}

	@Test
	void aBatchOfAWorkflowWhoseClaimsAreMostlyDuplicatesIsReadFirst() {
		claimAll("seen-0", "seen-1", "seen-2");
		for (int i = 0; i < 64; i++) {
			claimAll("seen-0", "seen-1", "seen-2");
		}
		List<ClaimResult> duplicates = new ArrayList<>();
		assertThat(this.dataSource.during(() -> duplicates.addAll(claimAll("seen-1", "seen-2"))))
			.as("the read alone")
			.isOne();
		assertThat(duplicates).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.IN_PROGRESS);
		List<ClaimResult> mixed = new ArrayList<>();
		assertThat(this.dataSource.during(() -> mixed.addAll(claimAll("seen-0", "fresh")))).as("the read, the insert")
			.isEqualTo(2);
		assertThat(mixed).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.IN_PROGRESS, ClaimOutcome.ACQUIRED);
	}

	@Test
	void aBatchCompletionWhoseCommitFailsCompletesNoneAndCompletesThemAllWhenTriedAgain() {
		List<ClaimResult> claims = claimAll("x", "y", "z");
		List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
		List<String> responses = List.of("\"x\"", "\"y\"", "\"z\"");
		this.dataSource.failNextCommit();
		assertThatException().isThrownBy(() -> this.store.completeAll(handles, responses));
		for (ClaimResult claim : claims) {
			IdempotencyRecord record = this.store.find(claim.record().id()).orElseThrow();
			assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
			assertThat(record.owner()).isEqualTo(claim.record().owner());
		}
		assertThat(this.store.completeAll(handles, responses)).containsExactly(true, true, true);
		assertThat(claims).allSatisfy((claim) -> assertThat(this.store.find(claim.record().id()).orElseThrow().status())
			.isEqualTo(RecordStatus.COMPLETED));
		assertThat(this.store.find(claims.get(1).record().id()).orElseThrow().response()).isEqualTo("\"y\"");
	}

	@Test
	void aBatchWhoseResponsesTogetherExceedTheServersLargestPacketIsCompleted() {
		long packet = JdbcClient.create(this.dataSource)
			.sql("SELECT @@max_allowed_packet")
			.query(Long.class)
			.single();
		// each response fits a statement of its own, the five together no statement
		String large = "\"" + "x".repeat((int) (packet / 4)) + "\"";
		List<ClaimResult> claims = claimAll("large-1", "large-2", "large-3", "large-4", "large-5");
		List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
		assertThat(this.store.completeAll(handles, List.of(large, large, large, large, large))).containsOnly(true)
			.hasSize(5);
		assertThat(this.store.find(claims.get(4).record().id()).orElseThrow().response()).isEqualTo(large);
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "text protocol", "server-side prepared statements" })
	void aBatchCompletionLocksOnlyTheRowsItCompletesEvenWhereTheServerThinksTheTableEmpty(String protocol)
			throws Exception {
		DataSource dataSource = protocol.startsWith("server") ? TestDatabases.mariaDbServerPrepared()
				: TestDatabases.mariaDb();
		// statistics of an empty table: left to itself, the optimizer scans it and locks every row it reads
		String table = "idempotency_batch_locks_test";
		JdbcClient client = JdbcClient.create(TestDatabases.mariaDb());
		client.sql("DROP TABLE IF EXISTS " + table).update();
		TestDatabases.createTable(TestDatabases.mariaDb(), "mysql", table);
		client.sql("ANALYZE TABLE " + table).query().listOfRows();
		client.sql("ALTER TABLE " + table + " STATS_AUTO_RECALC = 0").update();
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, table, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
		List<ClaimRequest> requests = new ArrayList<>();
		for (String key : List.of("other", "mine-1", "mine-2")) {
			requests.add(new ClaimRequest(new RecordId("batch-locks", key), "owner-" + key, null,
					Duration.ofSeconds(30), Duration.ofDays(1)));
		}
		List<ClaimHandle> handles = store.claimAll(requests).stream().map(ClaimResult::acquiredHandle).toList();
		TransactionTemplate transaction = new TransactionTemplate(
				new DataSourceTransactionManager(TestDatabases.mariaDb()));
		CountDownLatch locked = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> transaction.executeWithoutResult((status) -> {
			JdbcClient.create(TestDatabases.mariaDb())
				.sql("UPDATE " + table
						+ " SET updated_at = updated_at + 1 WHERE workflow = 'batch-locks' AND idempotency_key = 'other'")
				.update();
			locked.countDown();
			awaitUninterruptibly(release);
		}));
		try {
			locked.await();
			CompletableFuture<List<Boolean>> completion = CompletableFuture
				.supplyAsync(() -> store.completeAll(handles.subList(1, 3), List.of("\"1\"", "\"2\"")));
			await().until(() -> completion.isDone() || waitsForALock(client, table));
			assertThat(waitsForALock(client, table)).as("the completion waits for a row it does not complete")
				.isFalse();
			assertThat(completion.get()).containsExactly(true, true);
		}
		finally {
			release.countDown();
			holder.get();
		}
	}

	private static boolean waitsForALock(JdbcClient client, String table) {
		return client
			.sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?")
			.param("%" + table + "%")
			.query(Long.class)
			.single() > 0;
	}

	private static void awaitUninterruptibly(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private List<ClaimResult> claimAll(String... keys) {
		List<ClaimRequest> requests = new ArrayList<>();
		for (String key : keys) {
			requests.add(new ClaimRequest(new RecordId("batch-statements", this.prefix + "-" + key),
					"owner-" + key + "-" + UUID.randomUUID(), null, Duration.ofSeconds(30), Duration.ofDays(1)));
		}
		return this.store.claimAll(requests);
	}

}
