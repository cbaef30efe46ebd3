package io.github.idempotency.benchmarks;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * The batch protocol by hand, in {@link BarePostgres}'s table (its rows of this
 * benchmark's workflow are deleted when the next run starts).
 */
@State(Scope.Benchmark)
public class JdbcBatchBare {

	private static final String CLAIM = "INSERT INTO " + BarePostgres.TABLE
			+ " (workflow, idempotency_key, status, owner, lease_until, expires_at)"
			+ " SELECT ?, k, 'IN_PROGRESS', ?, ?, ? FROM unnest(?) AS k ON CONFLICT DO NOTHING"
			+ " RETURNING idempotency_key";

	private static final String COMPLETE = "UPDATE " + BarePostgres.TABLE
			+ " t SET status = 'COMPLETED', response = u.response, expires_at = ?"
			+ " FROM unnest(?, ?) AS u(idempotency_key, response) WHERE t.workflow = ?"
			+ " AND t.idempotency_key = u.idempotency_key AND t.owner = ? AND t.status = 'IN_PROGRESS'";

	final BatchDuplicates duplicates = new BatchDuplicates();

	ServersState servers;

	private String read;

	@Setup(Level.Trial)
	public void start(ServersState servers) {
		this.servers = servers;
		// BarePostgres's table, created here so that no state of this benchmark tears down
		// after the pool closed; the rows of an earlier run out
		BarePostgres.createTable(servers.jdbc);
		finishDuplicates();
		JdbcBatchBenchmark.fill(servers.jdbc, BarePostgres.TABLE, "INSERT INTO " + BarePostgres.TABLE
				+ " (workflow, idempotency_key, status, owner, response, lease_until, expires_at) SELECT 'filler', "
				+ "'filler-' || k, 'COMPLETED', 'filler', '{}', now(), 'infinity' FROM generate_series(1, ?) k");
	}

	/** Deletes the rows of an earlier run, then claims and completes the duplicates. */
	final void finishDuplicates() {
		this.read = "SELECT status, response FROM " + table() + " WHERE workflow = ? AND idempotency_key = ANY(?)";
		this.servers.jdbc.sql("DELETE FROM " + table() + " WHERE workflow = ?").param(workflow()).update();
		for (List<String> keys : this.duplicates.all(100)) {
			claim(keys, "setup");
			String[] responses = keys.stream()
				.map((key) -> this.servers.writer.writeValueAsString(Receipt.of(key)))
				.toArray(String[]::new);
			complete(keys, "setup", responses);
		}
	}

	String table() {
		return BarePostgres.TABLE;
	}

	String workflow() {
		return JdbcBatchBenchmark.WORKFLOW;
	}

	int claim(List<String> keys, String owner) {
		Instant now = Instant.now();
		return this.servers.jdbc.sql(CLAIM)
			.params(JdbcBatchBenchmark.WORKFLOW, owner, Timestamp.from(now.plus(BarePostgres.LEASE)),
					Timestamp.from(now.plus(BarePostgres.LEASE)), new SqlArrayValue("text", keys.toArray()))
			.query((rs, row) -> rs.getString(1))
			.list()
			.size();
	}

	int complete(List<String> keys, String owner, String[] responses) {
		return this.servers.jdbc.sql(COMPLETE)
			.params(Timestamp.from(Instant.now().plus(JdbcBatchBenchmark.RETENTION)),
					new SqlArrayValue("text", keys.toArray()), new SqlArrayValue("text", (Object[]) responses),
					JdbcBatchBenchmark.WORKFLOW, owner)
			.update();
	}

	List<Receipt> responses(List<String> keys) {
		return this.servers.jdbc.sql(this.read)
			.params(workflow(), new SqlArrayValue("text", keys.toArray()))
			.query((rs, row) -> {
				if (!"COMPLETED".equals(rs.getString(1))) {
					throw new IllegalStateException("Not finished");
				}
				return this.servers.reader.<Receipt>readValue(rs.getString(2));
			})
			.list();
	}

	/**
	 * The same protocol by hand in the starter's own table ({@code idempotency_record}, its
	 * 14 columns and two indexes, the {@link JdbcBatchBenchmark#FILLER_ROWS} filler rows
	 * included), under a workflow of its own, writing what the starter's batch writes: the claim with its
	 * attempt, times and {@code expires_at} (the lease's end plus the retention, which the
	 * completion leaves as it is, as the starter's does when a run ends within its lease),
	 * the completion with its status, response and {@code updated_at}. It tells the cost
	 * of the record's width from the cost of the starter's protocol.
	 */
	@State(Scope.Benchmark)
	public static class OnStarterTable extends JdbcBatchBare {

		static final String TABLE = "idempotency_record";

		static final String WORKFLOW_OF_BARE = JdbcBatchBenchmark.WORKFLOW + "-bare";

		private static final String CLAIM = "INSERT INTO " + TABLE
				+ " (workflow, idempotency_key, status, owner, attempt, lease_until, created_at, updated_at, expires_at)"
				+ " SELECT ?, k, 'IN_PROGRESS', ?, 1, ?, ?, ?, ? FROM unnest(?) AS k ON CONFLICT DO NOTHING"
				+ " RETURNING idempotency_key";

		private static final String COMPLETE = "UPDATE " + TABLE
				+ " t SET status = 'COMPLETED', response = u.response, updated_at = ?"
				+ " FROM unnest(?, ?) AS u(idempotency_key, response) WHERE t.workflow = ?"
				+ " AND t.idempotency_key = u.idempotency_key AND t.owner = ? AND t.status = 'IN_PROGRESS'";

		@Override
		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			// the starter's schema, as its auto-configuration creates it
			new ResourceDatabasePopulator(new ClassPathResource("io/github/idempotency/store/jdbc/schema-postgresql.sql"))
				.execute(servers.dataSource);
			finishDuplicates();
			JdbcBatchBenchmark.fill(servers.jdbc, TABLE, JdbcBatchBenchmark.STARTER_FILLER);
		}

		@Override
		String table() {
			return TABLE;
		}

		@Override
		String workflow() {
			return WORKFLOW_OF_BARE;
		}

		@Override
		int claim(List<String> keys, String owner) {
			long now = System.currentTimeMillis();
			long leaseUntil = now + BarePostgres.LEASE.toMillis();
			return this.servers.jdbc.sql(CLAIM)
				.params(WORKFLOW_OF_BARE, owner, leaseUntil, now, now,
						leaseUntil + JdbcBatchBenchmark.RETENTION.toMillis(), new SqlArrayValue("text", keys.toArray()))
				.query((rs, row) -> rs.getString(1))
				.list()
				.size();
		}

		@Override
		int complete(List<String> keys, String owner, String[] responses) {
			return this.servers.jdbc.sql(COMPLETE)
				.params(System.currentTimeMillis(), new SqlArrayValue("text", keys.toArray()),
						new SqlArrayValue("text", (Object[]) responses), WORKFLOW_OF_BARE, owner)
				.update();
		}

	}

}
