package io.github.idempotency.benchmarks;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The hand-written PostgreSQL protocol on {@code JdbcClient}: its own table
 * ({@value #TABLE}), the same primary key (workflow, key) as the starter's.
 */
@State(Scope.Benchmark)
public class BarePostgres {

	static final String TABLE = "bench_bare_record";

	static final String WORKFLOW = PaymentHandler.WORKFLOW;

	static final String WORKFLOW_IN_TRANSACTION = PaymentHandler.WORKFLOW_IN_TRANSACTION;

	static final Duration LEASE = Duration.ofSeconds(30);

	static final Duration RETENTION = Duration.ofMinutes(2);

	private static final String CLAIM = "INSERT INTO " + TABLE
			+ " (workflow, idempotency_key, status, owner, lease_until, expires_at) VALUES (?, ?, 'IN_PROGRESS', ?, ?, ?)"
			+ " ON CONFLICT DO NOTHING";

	private static final String INSERT_FINISHED = "INSERT INTO " + TABLE
			+ " (workflow, idempotency_key, status, owner, lease_until, expires_at) VALUES (?, ?, 'COMPLETED', ?, ?, ?)"
			+ " ON CONFLICT DO NOTHING";

	private static final String COMPLETE = "UPDATE " + TABLE
			+ " SET status = 'COMPLETED', response = ?, expires_at = ?"
			+ " WHERE workflow = ? AND idempotency_key = ? AND owner = ? AND status = 'IN_PROGRESS'";

	private static final String READ = "SELECT status, response FROM " + TABLE
			+ " WHERE workflow = ? AND idempotency_key = ?";

	ServersState servers;

	@Setup(Level.Trial)
	public void start(ServersState servers) {
		this.servers = servers;
		createTable(servers.jdbc);
		clear();
		for (String key : DuplicateKeys.all()) {
			claim(WORKFLOW, key, "setup");
			complete(WORKFLOW, key, "setup", servers.writer.writeValueAsString(Receipt.of(key)));
			insertFinished(WORKFLOW_IN_TRANSACTION, key, "setup");
		}
		ServersState.vacuum(servers.jdbc, TABLE);
	}

	/**
	 * Creates the hand-written protocol's table: 7 columns, and the index on
	 * {@code expires_at} without which a protocol that expires its records could not delete
	 * them but by reading the whole table (the starter's table and the peer's have it too).
	 * @param jdbc the client
	 */
	static void createTable(JdbcClient jdbc) {
		jdbc.sql("""
				CREATE TABLE IF NOT EXISTS bench_bare_record (
					workflow VARCHAR(255) NOT NULL,
					idempotency_key VARCHAR(255) NOT NULL,
					status VARCHAR(16) NOT NULL,
					owner VARCHAR(64) NOT NULL,
					response TEXT,
					lease_until TIMESTAMP WITH TIME ZONE NOT NULL,
					expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
					PRIMARY KEY (workflow, idempotency_key)
				)""").update();
		jdbc.sql("CREATE INDEX IF NOT EXISTS bench_bare_record_expires_at ON bench_bare_record (expires_at)").update();
	}

	@TearDown(Level.Trial)
	public void clear() {
		this.servers.jdbc.sql("TRUNCATE " + TABLE).update();
	}

	int claim(String workflow, String key, String owner) {
		Instant now = Instant.now();
		return this.servers.jdbc.sql(CLAIM)
			.params(workflow, key, owner, Timestamp.from(now.plus(LEASE)), Timestamp.from(now.plus(LEASE)))
			.update();
	}

	int insertFinished(String workflow, String key, String owner) {
		Instant now = Instant.now();
		return this.servers.jdbc.sql(INSERT_FINISHED)
			.params(workflow, key, owner, Timestamp.from(now), Timestamp.from(now.plus(RETENTION)))
			.update();
	}

	int complete(String workflow, String key, String owner, String response) {
		return this.servers.jdbc.sql(COMPLETE)
			.params(response, Timestamp.from(Instant.now().plus(RETENTION)), workflow, key, owner)
			.update();
	}

	String response(String workflow, String key) {
		return this.servers.jdbc.sql(READ).params(workflow, key).query((rs, row) -> {
			if (!"COMPLETED".equals(rs.getString(1))) {
				throw new IllegalStateException("Not finished: " + key);
			}
			return rs.getString(2);
		}).single();
	}

	String status(String workflow, String key) {
		return this.servers.jdbc.sql(READ).params(workflow, key).query((rs, row) -> rs.getString(1)).single();
	}

}
