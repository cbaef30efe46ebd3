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
 * On MariaDB a batch outside a transaction is claimed with one read and one multi-row
 * insert, a batch of duplicates with the read alone, and completed with one JDBC batch —
 * counting the statements prepared, in a table of its own.
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
	void aBatchIsClaimedWithOneReadAndOneInsertAndCompletedWithOneBatch() {
		List<ClaimResult> claims = new ArrayList<>();
		assertThat(this.dataSource.during(() -> claims.addAll(claimAll("a", "b", "c", "d")))).isEqualTo(2);
		assertThat(claims).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		List<ClaimHandle> handles = claims.stream().map(ClaimResult::acquiredHandle).toList();
		List<Boolean> completed = new ArrayList<>();
		assertThat(this.dataSource.during(
				() -> completed.addAll(this.store.completeAll(handles, List.of("\"a\"", "\"b\"", "\"c\"", "\"d\"")))))
			.isOne();
		assertThat(completed).containsOnly(true);
		List<ClaimResult> duplicates = new ArrayList<>();
		assertThat(this.dataSource.during(() -> duplicates.addAll(claimAll("a", "b", "c", "d")))).isOne();
		assertThat(duplicates).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.DUPLICATE);
		assertThat(duplicates.get(2).record().response()).isEqualTo("\"c\"");
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
