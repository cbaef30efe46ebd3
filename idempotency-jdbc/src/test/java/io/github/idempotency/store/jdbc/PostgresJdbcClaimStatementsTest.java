package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On PostgreSQL, counting the statements sent, in a table of its own: a claim of a
 * workflow whose claims are nearly all new is a plain insert, and one that finds a record
 * reads it next, inside the caller's transaction too; otherwise a claim is one statement
 * whatever it finds.
 */
class PostgresJdbcClaimStatementsTest {

	private static final String TABLE = "idempotency_claim_statements_test";

	private final StatementCounter dataSource = new StatementCounter(TestDatabases.postgres());

	private final TransactionTemplate transactions = new TransactionTemplate(
			new DataSourceTransactionManager(this.dataSource));

	private final JdbcIdempotencyStore store;

	private final String prefix = UUID.randomUUID().toString();

	PostgresJdbcClaimStatementsTest() {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
	}

	@Test
	void aFirstClaimIsOneStatement() {
		assertThat(this.dataSource.during(() -> claim("first", "owner-1"))).isOne();
	}

	@Test
	void aDuplicateClaimIsTheInsertAndARead() {
		assertThat(claim("done", "owner-1").acquiredHandle().complete("{\"ok\":true}")).isTrue();
		ClaimResult[] duplicate = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> duplicate[0] = claim("done", "owner-2"))).isEqualTo(2);
		assertThat(duplicate[0].outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate[0].record().response()).isEqualTo("{\"ok\":true}");
	}

	@Test
	void aClaimOfALiveLeaseIsTheInsertAndARead() {
		claim("running", "owner-1");
		ClaimResult[] conflict = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> conflict[0] = claim("running", "owner-2"))).isEqualTo(2);
		assertThat(conflict[0].outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(conflict[0].record().owner()).isEqualTo("owner-1");
	}

	@Test
	void aClaimThatNeverReadsFirstIsOneStatementWhateverItFinds() {
		this.store.setReadFirst(ReadFirst.NEVER);
		assertThat(this.dataSource.during(() -> claim("never", "owner-1").acquiredHandle().complete("1"))).isEqualTo(2);
		ClaimResult[] duplicate = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> duplicate[0] = claim("never", "owner-2"))).isOne();
		assertThat(duplicate[0].outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		claim("never-running", "owner-1");
		assertThat(this.dataSource.during(() -> claim("never-running", "owner-2").outcome()))
			.isOne();
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aClaimWhoseRowIsReleasedBetweenItsInsertAndItsReadInsertsAgain(boolean inABatch) {
		ClaimResult running = claim("released", "owner-1");
		JdbcIdempotencyStore other = new JdbcIdempotencyStore(TestDatabases.postgres(), TABLE, Duration.ofSeconds(5),
				new MutableClock(Instant.now()));
		// the insert found owner-1's row; owner-1 gives the key up before this claim reads it
		this.dataSource.beforeNext("SELECT", () -> assertThat(running.acquiredHandle().release(new IllegalStateException()))
			.isTrue());
		ClaimResult claim = inABatch ? this.store.claimAll(List.of(request("released", "owner-2"))).get(0)
				: claim("released", "owner-2");
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(claim.record().attempt()).isOne();
		assertThat(other.find(claim.record().id()).orElseThrow().owner()).isEqualTo("owner-2");
	}

	@Test
	void aDuplicateClaimInsideTheCallersTransactionIsTheInsertAndARead() {
		this.transactions.executeWithoutResult((status) -> claim("done-tx", "owner-1"));
		ClaimResult duplicate = this.transactions.execute((status) -> {
			ClaimResult[] result = new ClaimResult[1];
			assertThat(this.dataSource.during(() -> result[0] = claim("done-tx", "owner-2"))).isEqualTo(2);
			return result[0];
		});
		assertThat(duplicate).isNotNull();
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
	}

	@Test
	void aFirstClaimInsideTheCallersTransactionIsOneStatementAndKeepsItsLockTimeout() {
		this.transactions.executeWithoutResult((status) -> {
			JdbcClient jdbc = JdbcClient.create(this.dataSource);
			jdbc.sql("SET LOCAL lock_timeout = '1234ms'").update();
			assertThat(this.dataSource.during(() -> claim("first-tx", "owner-1"))).isOne();
			assertThat(jdbc.sql("SHOW lock_timeout").query(String.class).single()).isEqualTo("1234ms");
		});
	}

	private ClaimResult claim(String key, String owner) {
		return this.store.claim(request(key, owner));
	}

	private ClaimRequest request(String key, String owner) {
		return new ClaimRequest(new RecordId("statements", this.prefix + "-" + key), owner, null, Duration.ofSeconds(30),
				Duration.ofDays(1));
	}

}
