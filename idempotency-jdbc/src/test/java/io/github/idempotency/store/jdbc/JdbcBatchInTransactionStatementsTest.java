package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A batch inside the caller's transaction on the databases without a one-statement batch
 * claim (MariaDB, whose upsert's lock would last until the commit, and H2), counting the
 * statements sent, in a table of its own: one insert while the workflow's claims are
 * nearly all new; an insert that meets a row inserts none (the statement, not the
 * transaction, is rolled back), and the read and the insert of the rest follow; a
 * rollback leaves no record.
 */
class JdbcBatchInTransactionStatementsTest {

	private static final String TABLE = "idempotency_batch_tx_statements_test";

	private final String prefix = UUID.randomUUID().toString();

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "mysql", "h2" })
	void aBatchIsOneInsertAndOneThatMeetsARowReadsAndInsertsTheRestAndARollbackLeavesNoRecord(String platform) {
		DataSource database = "h2".equals(platform) ? TestDatabases.h2() : TestDatabases.mariaDb();
		TestDatabases.createTable(database, platform, TABLE);
		StatementCounter dataSource = new StatementCounter(database);
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, TABLE, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
		List<ClaimResult> done = claimAll(store, "done-tx");
		store.completeAll(List.of(done.get(0).acquiredHandle()), List.of("\"done\""));
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		List<ClaimResult> fresh = new ArrayList<>();
		Integer statements = transactions
			.execute((status) -> dataSource.during(() -> fresh.addAll(claimAll(store, "t1", "t2", "t3"))));
		assertThat(statements).as("the workflow's claims nearly all new: one insert").isOne();
		assertThat(fresh).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		assertThat(store.find(fresh.get(1).record().id()).orElseThrow().status())
			.as("written finished, committed with the transaction")
			.isEqualTo(RecordStatus.COMPLETED);
		List<ClaimResult> mixed = new ArrayList<>();
		statements = transactions
			.execute((status) -> dataSource.during(() -> mixed.addAll(claimAll(store, "t4", "done-tx", "t5"))));
		assertThat(statements).as("the insert, which met a row and inserted none; the read; the insert of the rest")
			.isEqualTo(3);
		assertThat(mixed).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED);
		assertThat(mixed.get(1).record().response()).isEqualTo("\"done\"");
		assertThat(store.find(mixed.get(0).record().id()).orElseThrow().owner())
			.isEqualTo(mixed.get(0).record().owner());
		List<RecordId> rolledBack = new ArrayList<>();
		transactions.executeWithoutResult((status) -> {
			List<ClaimResult> gone = claimAll(store, "gone-1", "gone-2");
			assertThat(gone).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
			gone.forEach((claim) -> rolledBack.add(claim.record().id()));
			status.setRollbackOnly();
		});
		assertThat(rolledBack).hasSize(2).allSatisfy((id) -> assertThat(store.find(id)).isEmpty());
	}

	private List<ClaimResult> claimAll(JdbcIdempotencyStore store, String... keys) {
		List<ClaimRequest> requests = new ArrayList<>();
		for (String key : keys) {
			requests.add(new ClaimRequest(new RecordId("batch-tx-statements", this.prefix + "-" + key),
					"owner-" + key + "-" + UUID.randomUUID(), null, Duration.ofSeconds(30), Duration.ofDays(1)));
		}
		return store.claimAll(requests);
	}

}
