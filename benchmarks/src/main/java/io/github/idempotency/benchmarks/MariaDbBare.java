package io.github.idempotency.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * The protocol by hand in a table of its own ({@value #TABLE}, the same primary key
 * as the starter's, 7 columns and an index on {@code expires_at}), on the clients of
 * {@link MariaDbServers}.
 */
@State(Scope.Benchmark)
public class MariaDbBare {

	static final String TABLE = "bench_bare_record";

	final BatchDuplicates duplicates = new BatchDuplicates();

	private final Map<Integer, String> claims = new ConcurrentHashMap<>();

	private final Map<Integer, String> reads = new ConcurrentHashMap<>();

	MariaDbServers servers;

	JdbcClient jdbc;

	JdbcTemplate batches;

	@Setup(Level.Trial)
	public void start(MariaDbServers servers) {
		this.servers = servers;
		this.jdbc = servers.jdbc;
		this.batches = servers.context.getBean(JdbcTemplate.class);
		createTable();
		this.jdbc.sql("DELETE FROM " + table() + " WHERE workflow = ?").param(workflow()).update();
		List<String> singles = List.of(DuplicateKeys.all());
		for (List<String> keys : this.duplicates.all(100)) {
			finish(keys);
		}
		for (int i = 0; i < singles.size(); i += 100) {
			finish(singles.subList(i, Math.min(singles.size(), i + 100)));
		}
		this.jdbc.sql(filler()).update();
		ServersState.vacuum(this.jdbc, table());
	}

	void createTable() {
		this.jdbc.sql("""
				CREATE TABLE IF NOT EXISTS bench_bare_record (
					workflow VARBINARY(255) NOT NULL,
					idempotency_key VARBINARY(255) NOT NULL,
					status VARCHAR(16) NOT NULL,
					owner VARCHAR(64) NOT NULL,
					response LONGTEXT,
					lease_until BIGINT NOT NULL,
					expires_at BIGINT NOT NULL,
					PRIMARY KEY (workflow, idempotency_key)
				) ENGINE = InnoDB""").update();
		// as the PostgreSQL table's (BarePostgres#createTable): a protocol that expires its records needs it
		this.jdbc.sql("CREATE INDEX IF NOT EXISTS bench_bare_record_expires_at ON bench_bare_record (expires_at)")
			.update();
	}

	String table() {
		return TABLE;
	}

	String workflow() {
		return JdbcBatchBenchmark.WORKFLOW;
	}

	String filler() {
		return "INSERT IGNORE INTO " + TABLE + " (workflow, idempotency_key, status, owner, response, "
				+ "lease_until, expires_at) SELECT 'filler', CONCAT('filler-', seq), 'COMPLETED', 'filler', '{}', 0, "
				+ Long.MAX_VALUE + " FROM seq_1_to_" + JdbcBatchBenchmark.FILLER_ROWS;
	}

	/** The columns a claim writes, and one row of their values with {@code ?} for key, owner and times. */
	String[] claimColumnsAndRow() {
		return new String[] { "workflow, idempotency_key, status, owner, lease_until, expires_at",
				"(?, ?, 'IN_PROGRESS', ?, ?, ?)" };
	}

	void addClaim(List<Object> values, String key, String owner, long now) {
		long leaseUntil = now + BarePostgres.LEASE.toMillis();
		Collections.addAll(values, workflow(), key, owner, leaseUntil, leaseUntil);
	}

	/** The completion's statement: its parameters are {@link #completion(String, String, String, long)}. */
	String completion() {
		return "UPDATE " + TABLE + " SET status = 'COMPLETED', response = ?, expires_at = ?"
				+ " WHERE workflow = ? AND idempotency_key = ? AND owner = ? AND status = 'IN_PROGRESS'";
	}

	Object[] completion(String key, String owner, String response, long now) {
		return new Object[] { response, now + JdbcBatchBenchmark.RETENTION.toMillis(), workflow(), key, owner };
	}

	private void finish(List<String> keys) {
		claim(keys, "setup");
		for (String key : keys) {
			complete(key, "setup", this.servers.writer.writeValueAsString(Receipt.of(key)));
		}
	}

	/**
	 * Claims {@code keys} in one {@code INSERT IGNORE}.
	 * @return how many it inserted
	 */
	int claim(List<String> keys, String owner) {
		String insert = this.claims.computeIfAbsent(keys.size(), (rows) -> "INSERT IGNORE INTO " + table() + " ("
				+ claimColumnsAndRow()[0] + ") VALUES "
				+ String.join(", ", Collections.nCopies(rows, claimColumnsAndRow()[1])));
		long now = System.currentTimeMillis();
		List<Object> values = new ArrayList<>(keys.size() * 8);
		for (String key : keys) {
			addClaim(values, key, owner, now);
		}
		return this.jdbc.sql(insert).params(values).update();
	}

	int complete(String key, String owner, String response) {
		return this.jdbc.sql(completion())
			.params(completion(key, owner, response, System.currentTimeMillis()))
			.update();
	}

	/** Completes {@code keys} in one JDBC batch in one transaction, as the starter does on MariaDB. */
	int completeAll(List<String> keys, String owner, List<String> responses) {
		long now = System.currentTimeMillis();
		List<Object[]> completions = new ArrayList<>(keys.size());
		for (int i = 0; i < keys.size(); i++) {
			completions.add(completion(keys.get(i), owner, responses.get(i), now));
		}
		int[] counts = this.servers.transactions
			.execute((tx) -> this.batches.batchUpdate(completion(), completions));
		int completed = 0;
		for (int count : counts) {
			completed += count;
		}
		return completed;
	}

	/** The stored results of {@code keys}, read in one {@code SELECT}, in no given order. */
	List<Receipt> responses(List<String> keys) {
		String read = this.reads.computeIfAbsent(keys.size(), (rows) -> "SELECT status, response FROM " + table()
				+ " WHERE workflow = ? AND idempotency_key IN (" + String.join(", ", Collections.nCopies(rows, "?"))
				+ ")");
		List<Object> values = new ArrayList<>(keys.size() + 1);
		values.add(workflow());
		values.addAll(keys);
		List<Receipt> receipts = this.jdbc.sql(read).params(values).query((rs, row) -> {
			if (!"COMPLETED".equals(rs.getString(1))) {
				throw new IllegalStateException("Not finished");
			}
			return this.servers.reader.<Receipt>readValue(rs.getString(2));
		}).list();
		JdbcBatchBenchmark.expect(keys.size(), receipts.size());
		return receipts;
	}

	/**
	 * The same protocol by hand in the starter's own table ({@code idempotency_record}, its
	 * 14 columns and two indexes, the filler rows included), under a workflow of its own,
	 * writing what the starter writes (as {@link JdbcBatchBare.OnStarterTable} on
	 * PostgreSQL): what the record's width costs, apart from the protocol.
	 */
	@State(Scope.Benchmark)
	public static class OnStarterTable extends MariaDbBare {

		@Override
		void createTable() {
			new ResourceDatabasePopulator(new ClassPathResource("io/github/idempotency/store/jdbc/schema-mysql.sql"))
				.execute(this.servers.dataSource);
		}

		@Override
		String table() {
			return "idempotency_record";
		}

		@Override
		String workflow() {
			return JdbcBatchBenchmark.WORKFLOW + "-bare";
		}

		@Override
		String filler() {
			return MariaDbBenchmark.STARTER_FILLER;
		}

		@Override
		String[] claimColumnsAndRow() {
			return new String[] {
					"workflow, idempotency_key, status, owner, attempt, lease_until, created_at, updated_at, expires_at",
					"(?, ?, 'IN_PROGRESS', ?, 1, ?, ?, ?, ?)" };
		}

		@Override
		void addClaim(List<Object> values, String key, String owner, long now) {
			long leaseUntil = now + BarePostgres.LEASE.toMillis();
			Collections.addAll(values, workflow(), key, owner, leaseUntil, now, now,
					leaseUntil + JdbcBatchBenchmark.RETENTION.toMillis());
		}

		@Override
		String completion() {
			return "UPDATE idempotency_record SET status = 'COMPLETED', response = ?, updated_at = ?"
					+ " WHERE workflow = ? AND idempotency_key = ? AND owner = ? AND status = 'IN_PROGRESS'";
		}

		@Override
		Object[] completion(String key, String owner, String response, long now) {
			return new Object[] { response, now, workflow(), key, owner };
		}

	}

}
