package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On MariaDB a batch outside a transaction is claimed with one multi-row insert while its
 * workflow's claims are nearly all new, else with one read and one insert of the rows it
 * did not find; a batch of duplicates with the read alone; and completed with one JDBC
 * batch — counting the statements prepared, in a table of its own.
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
	void aBatchOfNewKeysIsClaimedWithOneInsertAndCompletedWithOneBatch() {
		List<ClaimResult> claims = new ArrayList<>();
		assertThat(this.dataSource.during(() -> claims.addAll(claimAll("a", "b", "c", "d")))).isOne();
		assertThat(claims).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
		List<Boolean> completed = new ArrayList<>();
		assertThat(this.dataSource.during(
				() -> completed.addAll(this.store.completeAll(handles, List.of("\"a\"", "\"b\"", "\"c\"", "\"d\"")))))
			.isOne();
		assertThat(completed).containsOnly(true);
		List<ClaimResult> duplicates = new ArrayList<>();
		assertThat(this.dataSource.during(() -> duplicates.addAll(claimAll("a", "b", "c", "d"))))
			.as("the insert, which meets the rows and inserts none, then the read")
			.isEqualTo(2);
		assertThat(duplicates).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.DUPLICATE);
		assertThat(duplicates.get(2).record().response()).isEqualTo("\"c\"");
	}

	@Test
	void aBatchOfDuplicatesIsReadOnceTheWorkflowShowsThemAndABatchThatMeetsARowIsReadAndInserted() {
		// a workflow's first batches, as new keys: the insert alone, which fails on the row it meets
		for (int i = 0; i < 3; i++) {
			claimAll("seen-" + i);
		}
		List<ClaimResult> mixed = new ArrayList<>();
		assertThat(this.dataSource.during(() -> mixed.addAll(claimAll("seen-0", "fresh-0", "fresh-1"))))
			.as("the insert that met a row, the read, the insert of the others")
			.isEqualTo(3);
		assertThat(mixed).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.IN_PROGRESS, ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED);
		// then mostly duplicates: the workflow's batches are read before any insert
		for (int i = 0; i < 64; i++) {
			claimAll("seen-0", "seen-1", "seen-2");
		}
		List<ClaimResult> duplicates = new ArrayList<>();
		assertThat(this.dataSource.during(() -> duplicates.addAll(claimAll("seen-1", "seen-2")))).isOne();
		assertThat(duplicates).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.IN_PROGRESS);
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
