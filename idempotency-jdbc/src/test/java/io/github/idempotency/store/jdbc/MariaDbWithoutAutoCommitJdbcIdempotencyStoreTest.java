package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;

/**
 * The contract on a pool whose connections start with auto-commit off: outside a
 * transaction each step of the store must still commit on its own (a pool rolls back what
 * a connection returned to it left uncommitted).
 */
class MariaDbWithoutAutoCommitJdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.withoutAutoCommit(TestServers.mariaDbUrl(), "mysql"),
				"idempotency_record", Duration.ofSeconds(5), clock);
	}

}
