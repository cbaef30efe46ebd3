package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.Nested;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.TestDatabases;

/**
 * The contract on MariaDB with server-side prepared statements
 * ({@code useServerPrepStmts=true}), the setting docs/stores.md recommends: every
 * statement of the store, among them {@code SET STATEMENT ... FOR INSERT ... RETURNING}
 * and the batch statements, prepared by the server; claims by statement, and (nested)
 * claims that read first.
 */
class MariaDbServerPreparedJdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.mariaDbServerPrepared(), "idempotency_record",
				Duration.ofSeconds(5), clock);
	}

	@Nested
	class ReadingFirst extends IdempotencyStoreContract {

		@Override
		protected IdempotencyStore createStore(Clock clock) {
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(TestDatabases.mariaDbServerPrepared(),
					"idempotency_record", Duration.ofSeconds(5), clock);
			store.setReadFirst(ReadFirst.ALWAYS);
			return store;
		}

	}

}
