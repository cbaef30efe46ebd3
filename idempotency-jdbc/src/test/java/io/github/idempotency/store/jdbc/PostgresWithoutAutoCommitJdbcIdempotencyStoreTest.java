package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract on a pool whose connections start with auto-commit off: outside a
 * transaction each step of the store must still commit on its own (a pool rolls back what
 * a connection returned to it left uncommitted), the cleanup's deletes too.
 */
class PostgresWithoutAutoCommitJdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	private static final String CLEANUP_TABLE = "idempotency_cleanup_without_auto_commit";

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.withoutAutoCommit(TestServers.postgresUrl(), "postgresql"),
				"idempotency_record", Duration.ofSeconds(5), clock);
	}

	@Test
	void theCleanupsDeletesCommit() {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", CLEANUP_TABLE);
		MutableClock clock = new MutableClock(Instant.now());
		// a record finished through a pool in auto-commit, then cleaned up through one without
		JdbcIdempotencyStore writer = new JdbcIdempotencyStore(TestDatabases.postgres(), CLEANUP_TABLE,
				Duration.ofSeconds(5), clock);
		RecordId id = new RecordId("cleanup-without-auto-commit", UUID.randomUUID().toString());
		assertThat(writer.claim(new ClaimRequest(id, "owner", null, Duration.ofSeconds(30), Duration.ofMinutes(1)))
			.acquiredHandle()
			.complete("\"done\"")).isTrue();
		clock.advance(Duration.ofHours(1));
		JdbcIdempotencyStore cleaner = new JdbcIdempotencyStore(
				TestDatabases.withoutAutoCommit(TestServers.postgresUrl(), "postgresql"), CLEANUP_TABLE,
				Duration.ofSeconds(5), clock);
		assertThat(cleaner.deleteExpired(100)).isOne();
		assertThat(JdbcClient.create(TestDatabases.postgres())
			.sql("SELECT count(*) FROM " + CLEANUP_TABLE)
			.query(Long.class)
			.single()).isZero();
	}

}
