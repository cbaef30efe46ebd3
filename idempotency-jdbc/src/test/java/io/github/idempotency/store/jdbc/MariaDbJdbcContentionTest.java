package io.github.idempotency.store.jdbc;

import java.util.List;

import org.junit.jupiter.api.Nested;

import io.github.idempotency.testsupport.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.TransactionDefinition;

/**
 * On MariaDB in its default REPEATABLE READ, and in READ COMMITTED.
 */
class MariaDbJdbcContentionTest extends JdbcContentionTests {

	MariaDbJdbcContentionTest() {
		super(TestDatabases.mariaDb(), "mysql");
	}

	@Override
	long lockWaits(JdbcClient jdbc) {
		return lockWaitsOnMariaDb(jdbc);
	}

	@Override
	int killLockWaiters(JdbcClient jdbc) {
		return killLockWaitersOnMariaDb(jdbc);
	}

	static int killLockWaitersOnMariaDb(JdbcClient jdbc) {
		List<Long> threads = jdbc
			.sql("SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' "
					+ "AND trx_query LIKE :table")
			.param("table", "%" + TABLE + "%")
			.query(Long.class)
			.list();
		// KILL takes no parameter; the ids are the server's numbers
		threads.forEach((thread) -> jdbc.sql("KILL CONNECTION " + thread).update());
		return threads.size();
	}

	static long lockWaitsOnMariaDb(JdbcClient jdbc) {
		return jdbc
			.sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' "
					+ "AND trx_query LIKE :table")
			.param("table", "%" + TABLE + "%")
			.query(Long.class)
			.single();
	}

	@Nested
	class ReadCommitted extends JdbcContentionTests {

		ReadCommitted() {
			super(TestDatabases.mariaDb(), "mysql");
		}

		@Override
		long lockWaits(JdbcClient jdbc) {
			return lockWaitsOnMariaDb(jdbc);
		}

		@Override
		int killLockWaiters(JdbcClient jdbc) {
			return killLockWaitersOnMariaDb(jdbc);
		}

		@Override
		int isolation() {
			return TransactionDefinition.ISOLATION_READ_COMMITTED;
		}

	}

}
