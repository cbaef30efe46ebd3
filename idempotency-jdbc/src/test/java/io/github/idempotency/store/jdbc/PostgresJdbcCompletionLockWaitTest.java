package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On PostgreSQL a completion that is a transaction of its own bounds its lock wait with a
 * {@code lock_timeout} its statement sets for itself (the driver's query timeout costs a
 * timer task per statement), which ends with that statement; on a thread that holds a
 * transaction on the same data source (a result completing inside somebody else's
 * transaction) it keeps the query timeout and leaves that transaction's
 * {@code lock_timeout} as it was. Single completions and batch completions alike, on one
 * connection so that what a statement leaves behind shows.
 * {@code JdbcContentionTests} shows both kinds give up on a row another transaction
 * holds.
 */
class PostgresJdbcCompletionLockWaitTest {

	private static final String TABLE = "idempotency_completion_lock_wait_test";

	private final Connection connection;

	private final StatementCounter dataSource;

	private final JdbcIdempotencyStore store;

	private final String prefix = UUID.randomUUID().toString();

	PostgresJdbcCompletionLockWaitTest() throws Exception {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
		this.connection = TestDatabases.postgres().getConnection();
		this.dataSource = new StatementCounter(new SingleConnectionDataSource(this.connection, true));
		this.store = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofMillis(4321),
				new MutableClock(Instant.now()));
	}

	@AfterEach
	void close() throws Exception {
		this.connection.close();
	}

	@ParameterizedTest(name = "batch: {0}")
	@ValueSource(booleans = { false, true })
	void aCompletionOfItsOwnBoundsItsLockWaitInItsStatementAndLeavesNothingBehind(boolean batch) {
		List<ClaimHandle> claims = claim("alone", batch);
		String before = lockTimeout();
		assertThat(complete(claims)).containsOnly(true);
		assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 1))
			.contains("set_config('lock_timeout', '4321ms', true)");
		assertThat(lockTimeout()).isEqualTo(before);
	}

	@ParameterizedTest(name = "batch: {0}")
	@ValueSource(booleans = { false, true })
	void aCompletionOnAThreadThatHoldsAnotherTransactionLeavesItsLockTimeoutAsItWas(boolean batch) {
		List<ClaimHandle> claims = claim("inside", batch);
		new TransactionTemplate(new DataSourceTransactionManager(this.dataSource)).executeWithoutResult((status) -> {
			JdbcClient.create(this.dataSource).sql("SET LOCAL lock_timeout = '1234ms'").update();
			assertThat(complete(claims)).containsOnly(true);
			assertThat(this.dataSource.prepared.get(this.dataSource.prepared.size() - 1)).doesNotContain("set_config");
			assertThat(lockTimeout()).isEqualTo("1234ms");
		});
	}

	private List<ClaimHandle> claim(String key, boolean batch) {
		List<String> keys = batch ? List.of(key + "-1", key + "-2") : List.of(key);
		return keys.stream()
			.map((name) -> this.store
				.claim(new ClaimRequest(new RecordId("lock-wait", this.prefix + "-" + name), "owner-" + name, null,
						Duration.ofSeconds(30), Duration.ofDays(1)))
				.acquiredHandle())
			.toList();
	}

	private List<Boolean> complete(List<ClaimHandle> claims) {
		if (claims.size() == 1) {
			return List.of(claims.get(0).complete("\"done\""));
		}
		return this.store.completeAll(claims, claims.stream().map((claim) -> "\"done\"").toList());
	}

	private String lockTimeout() {
		return JdbcClient.create(this.dataSource).sql("SHOW lock_timeout").query(String.class).single();
	}

}
