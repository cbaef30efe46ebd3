package io.github.idempotency.store.redis;

import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.observe.IdempotencyObserver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's headline shape, a {@code @Transactional} operation on the redis store, whose
 * process is killed (a forked JVM, {@code kill -9}) while it is held at its commit: just
 * before it, and just after it, before the completion. Redis never says "done" for a charge
 * the database does not have: the redelivery after the lease runs it (once more, when the
 * kill came after the commit: the documented lesser evil). Never lost.
 */
class RedisCrashAroundTheCommitTest {

	private static final String CHARGES = "crash_around_commit_charges";

	private static final String WORKFLOW = "payment";

	private static final String HELD = "held at the commit";

	private static LettuceConnectionFactory redis;

	private static JdbcClient jdbc;

	@BeforeAll
	static void connect() {
		redis = RedisConnections.standalone(TestServers.redisUrl());
		jdbc = JdbcClient.create(dataSource(TestServers.postgresUrl()));
		jdbc.sql("CREATE TABLE IF NOT EXISTS " + CHARGES + " (ref TEXT NOT NULL)").update();
	}

	@AfterAll
	static void disconnect() {
		redis.destroy();
	}

	@ParameterizedTest(name = "killed {0}: charged {1} time(s) in all")
	@CsvSource({ "before-commit, 1", "after-commit, 2" })
	void aProcessKilledAtItsCommitNeverLeavesACompletedRecordForAChargeTheDatabaseDoesNotHave(String when,
			int charged) throws Exception {
		String prefix = "idempotency-test-" + UUID.randomUUID();
		String key = "k-" + UUID.randomUUID();
		Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), ChargeAndHold.class.getName(), TestServers.redisUrl(),
				TestServers.postgresUrl(), prefix, key, when)
			.redirectErrorStream(true)
			.start();
		try (BufferedReader output = new BufferedReader(
				new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
			StringBuilder seen = new StringBuilder();
			for (String line = output.readLine(); line != null && !line.equals(HELD); line = output.readLine()) {
				seen.append(line).append('\n');
			}
			assertThat(child.isAlive()).as("the child reached its commit:\n" + seen).isTrue();
			child.destroyForcibly();
			assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			child.destroyForcibly();
		}
		MutableClock clock = new MutableClock(Instant.now());
		RedisIdempotencyStore store = new RedisIdempotencyStore(redis, prefix, clock);
		assertThat(store.find(new RecordId(WORKFLOW, key)).orElseThrow().status())
			.isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(charges(key)).isEqualTo(charged - 1);
		// the redelivery, once the crashed run's lease has run out
		clock.advance(Duration.ofSeconds(31));
		try (IdempotencyEngine engine = engine(store)) {
			assertThat(charge(engine, transactions(dataSource(TestServers.postgresUrl())), key, null))
				.isEqualTo("charged " + key);
		}
		assertThat(store.find(new RecordId(WORKFLOW, key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(charges(key)).isEqualTo(charged);
	}

	private static int charges(String key) {
		return jdbc.sql("SELECT count(*) FROM " + CHARGES + " WHERE ref = ?").param(key).query(Integer.class).single();
	}

	static IdempotencyEngine engine(RedisIdempotencyStore store) {
		return new IdempotencyEngine(store, JsonMapper.builder().build(), EngineSettings.defaults(),
				IdempotencyObserver.NONE);
	}

	static DataSource dataSource(String url) {
		return new DriverManagerDataSource(url);
	}

	static TransactionTemplate transactions(DataSource dataSource) {
		return new TransactionTemplate(new DataSourceTransactionManager(dataSource));
	}

	/**
	 * One charge in a PostgreSQL transaction on the redis store, which
	 * {@code hold} ({@code before-commit} or {@code after-commit}) stops at.
	 */
	static Object charge(IdempotencyEngine engine, TransactionTemplate transactions, String key, String hold) {
		IdempotentOperation operation = engine.prepare(OperationDefinition.of(WORKFLOW, String.class)
			.fingerprinted(false)
			.leaseTtl(Duration.ofSeconds(30))
			.onInProgress(InProgressPolicy.REJECT)
			.build());
		JdbcClient client = JdbcClient.create(((DataSourceTransactionManager) transactions.getTransactionManager())
			.getDataSource());
		return transactions.execute((status) -> {
			try {
				return engine.execute(operation, key, null, () -> {
					client.sql("INSERT INTO " + CHARGES + " (ref) VALUES (?)").param(key).update();
					if (hold != null) {
						TransactionSynchronizationManager.registerSynchronization(new Hold(hold));
					}
					return "charged " + key;
				});
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	/** Says it is held, then waits to be killed. */
	private record Hold(String when) implements TransactionSynchronization {

		@Override
		public void beforeCommit(boolean readOnly) {
			hold("before-commit");
		}

		@Override
		public void afterCommit() {
			hold("after-commit");
		}

		private void hold(String point) {
			if (this.when.equals(point)) {
				System.out.println(HELD);
				System.out.flush();
				while (true) {
					LockSupport.park();
				}
			}
		}

	}

	/** The forked JVM: {@code redisUrl postgresUrl keyPrefix key hold}. */
	public static final class ChargeAndHold {

		public static void main(String[] args) {
			RedisIdempotencyStore store = new RedisIdempotencyStore(RedisConnections.standalone(args[0]), args[2],
					Clock.systemUTC());
			charge(engine(store), transactions(dataSource(args[1])), args[3], args[4]);
			System.out.println("not held");
			System.exit(1);
		}

	}

}
