package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Inside the caller's transaction a claim has no lease, but its record is kept as long as
 * a leased claim's (the lease's length + retention): a completion within that length
 * changes no indexed column, so on PostgreSQL it is a HOT update (no index entry written);
 * one after it keeps the record the retention from then. Each test in a new table of its
 * own, whose counts the server publishes once the connections that wrote go idle (within
 * PostgreSQL's own 10 s).
 */
class PostgresJdbcInTransactionCompletionTest {

	private static final String TABLE = "idempotency_tx_completion_test";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private static final RecordId ID = new RecordId("payments", "payment-1");

	private final DataSource dataSource = TestDatabases.postgres();

	private final MutableClock clock = new MutableClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));

	private final JdbcIdempotencyStore store;

	private final TransactionTemplate transactions = new TransactionTemplate(
			new DataSourceTransactionManager(this.dataSource));

	PostgresJdbcInTransactionCompletionTest() {
		TestDatabases.createTable(this.dataSource, "postgresql", TABLE);
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), this.clock);
	}

	@Test
	void aCompletionWithinTheLeasesLengthKeepsTheClaimsExpiryAndWritesNoIndexEntry() {
		Instant claimedAt = this.clock.instant();
		claimAndCompleteAfter(LEASE.minusSeconds(1));
		IdempotencyRecord record = this.store.find(ID).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.response()).isEqualTo("receipt");
		assertThat(record.expiresAt()).isEqualTo(claimedAt.plus(LEASE).plus(RETENTION));
		assertThat(updates()).isEqualTo("1 updated, 1 HOT");
	}

	@Test
	void aCompletionAfterTheLeasesLengthKeepsTheRecordTheRetentionFromThen() {
		Instant claimedAt = this.clock.instant();
		claimAndCompleteAfter(LEASE.plusSeconds(1));
		assertThat(this.store.find(ID).orElseThrow().expiresAt())
			.isEqualTo(claimedAt.plus(LEASE).plusSeconds(1).plus(RETENTION));
	}

	private void claimAndCompleteAfter(Duration runTime) {
		this.transactions.executeWithoutResult((transaction) -> {
			var claim = this.store.claim(new ClaimRequest(ID, "owner-1", null, LEASE, RETENTION)).acquiredHandle();
			this.clock.advance(runTime);
			assertThat(claim.complete("receipt")).isTrue();
		});
	}

	private String updates() {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		String counts = "SELECT pg_stat_get_tuples_updated(oid), pg_stat_get_tuples_hot_updated(oid) FROM pg_class "
				+ "WHERE oid = '" + TABLE + "'::regclass";
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc.sql(counts).query((rs, row) -> rs.getLong(1)).single(), (updated) -> updated > 0);
		return jdbc.sql(counts).query((rs, row) -> rs.getLong(1) + " updated, " + rs.getLong(2) + " HOT").single();
	}

}
