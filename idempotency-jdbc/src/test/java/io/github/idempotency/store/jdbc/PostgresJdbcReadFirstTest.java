package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
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
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim that reads first, counting the statements sent: a duplicate is one plain
 * {@code SELECT}, a first delivery that {@code SELECT} and the insert; one that inserts
 * first is the insert alone for a first delivery, and the insert and a read for a
 * duplicate; the one-statement claim is one statement for both; what
 * {@link ReadFirst#ADAPTIVE} chooses follows the share of duplicates of each workflow;
 * the caller's transaction never reads first, but inserts first as well; an expired lease still goes to the atomic
 * claim statement.
 */
class PostgresJdbcReadFirstTest {

	private static final String TABLE = "idempotency_read_first_test";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final StatementCounter dataSource = new StatementCounter(TestDatabases.postgres());

	private final MutableClock clock = new MutableClock(Instant.now());

	private final JdbcIdempotencyStore store;

	private final String workflow = UUID.randomUUID().toString();

	PostgresJdbcReadFirstTest() {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), this.clock);
	}

	@Test
	void readingFirstADuplicateIsOneSelectOfWhatAnswersItAndAFirstDeliveryTwoStatements() {
		this.store.setReadFirst(ReadFirst.ALWAYS);
		ClaimResult[] first = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> first[0] = claim(this.workflow, "k1", "owner-1"))).isEqualTo(2);
		assertThat(first[0].acquiredHandle().complete("1")).isTrue();
		ClaimResult[] duplicate = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> duplicate[0] = claim(this.workflow, "k1", "owner-2"))).isOne();
		assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 1))
			.startsWith("SELECT status, fingerprint, response, expires_at FROM ");
		assertThat(duplicate[0].outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate[0].record().response()).isEqualTo("1");
	}

	@Test
	void readingFirstAFailureReadsTheWholeRecordAfterTheColumnsThatAnswerADuplicate() {
		this.store.setReadFirst(ReadFirst.ALWAYS);
		claim(this.workflow, "k1", "owner-1").acquiredHandle().fail(new IllegalArgumentException("declined"));
		ClaimResult[] replay = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> replay[0] = claim(this.workflow, "k1", "owner-2"))).isEqualTo(2);
		assertThat(replay[0].outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(replay[0].record().errorType()).isEqualTo(IllegalArgumentException.class.getName());
		assertThat(replay[0].record().errorMessage()).isEqualTo("declined");
		assertThat(replay[0].record().owner()).isEqualTo("owner-1");
	}

	@Test
	void readingFirstALiveClaimIsInProgressAndAnExpiredLeaseIsTakenOverByTheClaimStatement() {
		this.store.setReadFirst(ReadFirst.ALWAYS);
		claim(this.workflow, "k1", "owner-1").acquiredHandle().saveRecoveryPoint("half-way");
		ClaimResult running = claim(this.workflow, "k1", "owner-2");
		assertThat(running.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(running.record()).isEqualTo(this.store.find(running.record().id()).orElseThrow());
		this.clock.advance(LEASE);
		ClaimResult takeover = claim(this.workflow, "k1", "owner-3");
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().recoveryPoint()).isEqualTo("half-way");
	}

	@Test
	void adaptiveReadsFirstOnlyForAWorkflowWhoseClaimsAreMostlyDuplicates() {
		this.store.setReadFirst(ReadFirst.ADAPTIVE);
		String duplicates = this.workflow + "-duplicates";
		claim(duplicates, "k", "owner-0").acquiredHandle().complete("1");
		assertThat(this.dataSource.during(() -> claim(duplicates, "k", "owner-1")))
			.as("a duplicate before any history: the insert, then the read").isEqualTo(2);
		for (int i = 0; i < 64; i++) {
			assertThat(claim(duplicates, "k", "owner-" + i).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		}
		String firsts = this.workflow + "-firsts";
		assertThat(this.dataSource.during(() -> claim(firsts, "new", "owner-new")))
			.as("another workflow's first delivery does not read first").isOne();
		assertThat(this.dataSource.during(() -> claim(duplicates, "new", "owner-new")))
			.as("a first delivery of the mostly-duplicates workflow reads first").isEqualTo(2);
		for (int i = 0; i < 64; i++) {
			claim(duplicates, "new-" + i, "owner-new-" + i);
		}
		assertThat(this.dataSource.during(() -> claim(duplicates, "newer", "owner-newer")))
			.as("once its claims are mostly new again, it stops reading first").isOne();
	}

	@Test
	void adaptiveClaimsAWorkflowOfMixedDeliveriesInOneStatementWhateverItFinds() {
		this.store.setReadFirst(ReadFirst.ADAPTIVE);
		String mixed = this.workflow + "-mixed";
		claim(mixed, "done", "owner-0").acquiredHandle().complete("1");
		for (int i = 0; i < 64; i++) {
			claim(mixed, "new-" + i, "owner-" + i);
			assertThat(claim(mixed, "done", "owner-" + i).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		}
		assertThat(this.dataSource.during(() -> claim(mixed, "done", "owner-dup")))
			.as("half of its claims answered: a duplicate is one statement").isOne();
		assertThat(this.dataSource.during(() -> claim(mixed, "newer", "owner-newer")))
			.as("and so is a first delivery").isOne();
	}

	@Test
	void aClaimInTheCallersTransactionNeverReadsFirst() {
		this.store.setReadFirst(ReadFirst.ALWAYS);
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		assertThat(this.dataSource.during(() -> transactions.execute((status) -> claim(this.workflow, "tx", "owner-1"))))
			.as("the insert alone (the transaction's own statements are not counted)").isOne();
	}

	@Test
	void aClaimInTheCallersTransactionInsertsFirstWhileItsWorkflowsClaimsAreNew() {
		this.store.setReadFirst(ReadFirst.ADAPTIVE);
		claim(this.workflow, "done", "owner-1").acquiredHandle().complete("1");
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		ClaimResult[] first = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> transactions.execute((status) -> first[0] = claim(this.workflow, "new",
				"owner-2"))))
			.as("the insert alone").isOne();
		assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 1)).doesNotContain("existing AS");
		assertThat(first[0].outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		ClaimResult[] duplicate = new ClaimResult[1];
		assertThat(this.dataSource.during(() -> transactions.execute((status) -> duplicate[0] = claim(this.workflow,
				"done", "owner-3"))))
			.as("the insert, then a read of the row it found").isEqualTo(2);
		assertThat(duplicate[0].outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate[0].record().response()).isEqualTo("1");
	}

	private ClaimResult claim(String workflow, String key, String owner) {
		return this.store.claim(new ClaimRequest(new RecordId(workflow, key), owner, null, LEASE, Duration.ofHours(1)));
	}

}
