package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.BatchFailures;
import io.github.idempotency.internal.BatchItem;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
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

/**
 * On PostgreSQL a batch is claimed in one statement (and one read of the rows it found,
 * while its workflow's claims are nearly all new) and completed in one, whatever its size, and
 * a batch of {@code void} items in the caller's transaction costs one statement in all —
 * counting the statements sent, in a table of its own.
 */
class PostgresJdbcBatchStatementsTest {

	private static final String TABLE = "idempotency_batch_statements_test";

	private static final String WORKFLOW = "batch-statements";

	private final StatementCounter dataSource = new StatementCounter(TestDatabases.postgres());

	private final TransactionTemplate transactions = new TransactionTemplate(
			new DataSourceTransactionManager(this.dataSource));

	private final JdbcIdempotencyStore store;

	private final IdempotencyEngine engine;

	private final String prefix = UUID.randomUUID().toString();

	PostgresJdbcBatchStatementsTest() {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
		this.engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.retention(Duration.ofDays(1))
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ofSeconds(20))
						.build(),
				IdempotencyObserver.NONE);
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aBatchOfNewKeysIsClaimedInOneStatementAndCompletedInOne() {
		List<ClaimResult> claims = new ArrayList<>();
		assertThat(this.dataSource.during(() -> claims.addAll(claimAll("a", "b", "c", "d", "e")))).isOne();
		assertThat(claims).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
		List<Boolean> completed = new ArrayList<>();
		assertThat(this.dataSource.during(() -> completed.addAll(this.store.completeAll(handles,
				List.of("\"a\"", "\"b\"", "\"c\"", "\"d\"", "\"e\""))))).isOne();
		assertThat(completed).containsOnly(true);
		assertThat(record("c").response()).isEqualTo("\"c\"");
	}

	@Test
	void aBatchThatFindsRecordsIsTheInsertAndAReadWhileItsWorkflowsClaimsAreNewThenOneStatement() {
		List<ClaimResult> first = claimAll("done", "running");
		this.store.completeAll(List.of(first.get(0).acquiredHandle()), Collections.singletonList(null));
		List<ClaimResult> claims = new ArrayList<>();
		assertThat(this.dataSource.during(() -> claims.addAll(claimAll("new", "done", "running"))))
			.as("claims nearly all new so far: the insert, then one read of the rows it found").isEqualTo(2);
		assertThat(claims).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.IN_PROGRESS);
		for (int i = 0; i < 12; i++) {
			assertThat(claimAll("done", "running")).extracting(ClaimResult::outcome)
				.containsExactly(ClaimOutcome.DUPLICATE, ClaimOutcome.IN_PROGRESS);
		}
		claims.clear();
		assertThat(this.dataSource.during(() -> claims.addAll(claimAll("newer", "done", "running"))))
			.as("half of the claims answered now: one statement reads what exists and inserts the rest").isOne();
		assertThat(claims).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.IN_PROGRESS);
	}

	@Test
	void aBatchInTheCallersTransactionInsertsFirstWhileItsWorkflowsClaimsAreNewThenReadsWhatExistsInTheSameStatement() {
		List<ClaimResult> first = claimAll("done");
		this.store.completeAll(List.of(first.get(0).acquiredHandle()), Collections.singletonList(null));
		List<ClaimResult> claims = new ArrayList<>();
		Integer statements = this.transactions
			.execute((status) -> this.dataSource.during(() -> claims.addAll(claimAll("new", "done"))));
		assertThat(statements).as("claims nearly all new so far: the insert, then one read of the rows it found")
			.isEqualTo(2);
		assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 2)).doesNotContain("existing AS");
		assertThat(claims).extracting(ClaimResult::outcome).containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE);
		assertThat(record("new").status()).isEqualTo(RecordStatus.COMPLETED);
		for (int i = 0; i < 24; i++) {
			List<ClaimResult> duplicate = this.transactions.execute((status) -> claimAll("done"));
			assertThat(duplicate).extracting(ClaimResult::outcome).containsExactly(ClaimOutcome.DUPLICATE);
		}
		claims.clear();
		statements = this.transactions
			.execute((status) -> this.dataSource.during(() -> claims.addAll(claimAll("newer", "done"))));
		assertThat(statements).as("most claims answered now: one statement reads what exists and inserts the rest")
			.isOne();
		assertThat(claims).extracting(ClaimResult::outcome).containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE);
	}

	@Test
	void aBatchOfVoidItemsInTheCallersTransactionIsOneStatement() {
		AtomicInteger runs = new AtomicInteger();
		Integer statements = this.transactions.execute((status) -> {
			JdbcClient.create(this.dataSource).sql("SET LOCAL lock_timeout = '1234ms'").update();
			int count = this.dataSource.during(() -> executeAll(runs, "v1", "v2", "v3", "v4"));
			assertThat(JdbcClient.create(this.dataSource).sql("SHOW lock_timeout").query(String.class).single())
				.isEqualTo("1234ms");
			return count;
		});
		assertThat(statements).isOne();
		assertThat(runs).hasValue(4);
		assertThat(record("v3").status()).isEqualTo(RecordStatus.COMPLETED);
		this.transactions.executeWithoutResult((status) -> executeAll(runs, "v1", "v5", "v4"));
		assertThat(runs).hasValue(5);
	}

	@Test
	void aBatchWithResultsInTheCallersTransactionIsTwoStatementsAndARollbackLeavesNoRecord() {
		Integer statements = this.transactions.execute((status) -> {
			List<ClaimResult> claims = new ArrayList<>();
			int count = this.dataSource.during(() -> claims.addAll(claimAll("r1", "r2", "r3")));
			List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
			count += this.dataSource.during(() -> this.store.completeAll(handles, List.of("\"1\"", "\"2\"", "\"3\"")));
			return count;
		});
		assertThat(statements).isEqualTo(2);
		assertThat(record("r2").response()).isEqualTo("\"2\"");
		this.transactions.executeWithoutResult((status) -> {
			assertThat(claimAll("gone-1", "gone-2")).extracting(ClaimResult::outcome)
				.containsOnly(ClaimOutcome.ACQUIRED);
			status.setRollbackOnly();
		});
		assertThat(this.store.find(id("gone-1"))).isEmpty();
		assertThat(this.store.find(id("gone-2"))).isEmpty();
	}

	@Test
	void aBatchOfVoidItemsOutsideATransactionIsTwoStatements() {
		AtomicInteger runs = new AtomicInteger();
		assertThat(this.dataSource.during(() -> executeAll(runs, "o1", "o2", "o3"))).isEqualTo(2);
		assertThat(runs).hasValue(3);
		assertThat(record("o2").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	private List<ClaimResult> claimAll(String... keys) {
		List<ClaimRequest> requests = new ArrayList<>();
		for (String key : keys) {
			requests.add(new ClaimRequest(id(key), "owner-" + key + "-" + UUID.randomUUID(), null,
					Duration.ofSeconds(30), Duration.ofDays(1)));
		}
		return this.store.claimAll(requests);
	}

	private List<@Nullable Object> executeAll(AtomicInteger runs, String... keys) {
		IdempotentOperation operation = this.engine.prepare(OperationDefinition.of(WORKFLOW, void.class)
			.fingerprinted(false)
			.build());
		List<BatchItem> items = new ArrayList<>();
		for (String key : keys) {
			items.add(new BatchItem(key, this.prefix + "-" + key, null));
		}
		try {
			return this.engine.executeAll(operation, items, BatchFailures.NONE,
					(positions, results) -> runs.addAndGet(positions.length));
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private RecordId id(String key) {
		return new RecordId(WORKFLOW, this.prefix + "-" + key);
	}

	private io.github.idempotency.store.IdempotencyRecord record(String key) {
		return this.store.find(id(key)).orElseThrow();
	}

}
