package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On MariaDB a claim outside the caller's transaction is one statement whatever it finds
 * (a new key, a duplicate, a live lease, an expired lease to take over first found),
 * counting the statements sent, in a table of its own.
 */
class MariaDbJdbcClaimStatementsTest {

	private static final String TABLE = "idempotency_claim_statements_test";

	private final StatementCounter dataSource = new StatementCounter(TestDatabases.mariaDb());

	private final MutableClock clock = new MutableClock(Instant.now());

	private final JdbcIdempotencyStore store;

	private final String prefix = UUID.randomUUID().toString();

	MariaDbJdbcClaimStatementsTest() {
		TestDatabases.createTable(TestDatabases.mariaDb(), "mysql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), this.clock);
	}

	@Test
	void aFirstClaimIsOneStatementAndAcquires() {
		ClaimResult[] first = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> first[0] = claim("first", "owner-1"))).isOne();
		assertThat(first[0].outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(first[0].record().owner()).isEqualTo("owner-1");
	}

	@Test
	void aDuplicateClaimIsOneStatementAndAnswersTheStoredResult() {
		assertThat(claim("done", "owner-1").acquiredHandle().complete("{\"ok\":true}")).isTrue();
		ClaimResult[] duplicate = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> duplicate[0] = claim("done", "owner-2"))).isOne();
		assertThat(duplicate[0].outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate[0].record().response()).isEqualTo("{\"ok\":true}");
		assertThat(duplicate[0].record().owner()).isEqualTo("owner-1");
	}

	@Test
	void aClaimOfALiveLeaseIsOneStatementAndChangesNothing() {
		claim("running", "owner-1");
		ClaimResult[] conflict = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> conflict[0] = claim("running", "owner-2"))).isOne();
		assertThat(conflict[0].outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(conflict[0].record().owner()).isEqualTo("owner-1");
		assertThat(this.store.find(id("running"))).hasValueSatisfying((record) -> {
			assertThat(record.owner()).isEqualTo("owner-1");
			assertThat(record.attempt()).isOne();
		});
	}

	@Test
	void aClaimOfAnExpiredLeaseTakesItOver() {
		claim("crashed", "owner-1");
		this.clock.advance(Duration.ofMinutes(1));
		ClaimResult takeover = claim("crashed", "owner-2");
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.isTakeover()).isTrue();
		assertThat(takeover.record().owner()).isEqualTo("owner-2");
		assertThat(takeover.record().attempt()).isEqualTo(2);
	}

	private ClaimResult claim(String key, String owner) {
		return this.store.claim(new ClaimRequest(id(key), owner, null, Duration.ofSeconds(30), Duration.ofDays(1)));
	}

	private RecordId id(String key) {
		return new RecordId("statements", this.prefix + "-" + key);
	}

}
