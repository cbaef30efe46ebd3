package io.github.idempotency.benchmarks;

import java.sql.Types;
import java.util.List;
import java.util.UUID;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * Whether a batch of claims alike should send its common values once: one insert of
 * {@value #BATCH} new claims into a copy of the starter's table, as the jdbc store's
 * insert-first batch claim writes it on PostgreSQL, its claims passed as six arrays
 * ({@code arrays}: workflow, key, fingerprint, owner, lease end, expiry; the store's form)
 * or as two arrays and four scalars ({@code alike}: keys and owners, the rest shared).
 * Measured and left out: no difference beyond the noise (docs/benchmarks.md). One
 * connection with {@code synchronous_commit} off, so that the WAL flush does not hide the
 * statement's own cost. Each iteration starts from the same table: emptied
 * ({@code TRUNCATE}: a new file and new indexes, where deleted rows would leave the next
 * form a bloated index), then the {@link JdbcBatchBenchmark#FILLER_ROWS} filler rows.
 */
@State(Scope.Benchmark)
public class JdbcBatchInputBenchmark {

	static final int BATCH = 100;

	private static final String WORKFLOW = "bench-batch-input";

	private static final String TABLE = "bench_batch_input";

	private static final String INSERT = " INSERT INTO " + TABLE + " (workflow, idempotency_key, status, "
			+ "fingerprint, owner, attempt, lease_until, recovery_point, response, error_type, error_message, created_at, "
			+ "updated_at, expires_at) SELECT i.workflow, i.idempotency_key, 'IN_PROGRESS', i.fingerprint, i.owner, 1, "
			+ "i.lease_until, NULL, NULL, NULL, NULL, ?, ?, i.expires_at FROM input i ORDER BY i.position "
			+ "ON CONFLICT (workflow, idempotency_key) DO NOTHING RETURNING workflow, idempotency_key";

	private static final String ARRAYS = "WITH input AS (SELECT * FROM unnest(?::text[], ?::text[], ?::text[], "
			+ "?::text[], ?::int8[], ?::int8[]) WITH ORDINALITY AS i(workflow, idempotency_key, fingerprint, owner, "
			+ "lease_until, expires_at, position))" + INSERT;

	private static final String ALIKE = "WITH input AS (SELECT CAST(? AS text) AS workflow, i.idempotency_key, "
			+ "CAST(? AS text) AS fingerprint, i.owner, CAST(? AS bigint) AS lease_until, CAST(? AS bigint) AS expires_at, "
			+ "i.position FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS i(idempotency_key, owner, position))"
			+ INSERT;

	@Param({ "arrays", "alike" })
	public String form;

	private SingleConnectionDataSource dataSource;

	private JdbcClient jdbc;

	private final String run = UUID.randomUUID().toString().substring(0, 13);

	private long next;

	@Setup(Level.Trial)
	public void start() {
		this.dataSource = new SingleConnectionDataSource((String) Servers.properties().get("spring.datasource.url"),
				true);
		new ResourceDatabasePopulator(new ClassPathResource("io/github/idempotency/store/jdbc/schema-postgresql.sql"))
			.execute(this.dataSource);
		this.jdbc = JdbcClient.create(this.dataSource);
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS " + TABLE + " (LIKE idempotency_record INCLUDING ALL)").update();
		this.jdbc.sql("SET synchronous_commit = off").update();
	}

	@Setup(Level.Iteration)
	public void clear() {
		this.jdbc.sql("TRUNCATE " + TABLE).update();
		JdbcBatchBenchmark.fill(this.jdbc, TABLE,
				JdbcBatchBenchmark.STARTER_FILLER.replace("INTO idempotency_record", "INTO " + TABLE));
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.jdbc.sql("DROP TABLE " + TABLE).update();
		this.dataSource.destroy();
	}

	@Benchmark
	public int insert() {
		String[] keys = new String[BATCH];
		String[] owners = new String[BATCH];
		for (int i = 0; i < BATCH; i++) {
			keys[i] = this.run + "-" + this.next;
			owners[i] = this.run + "-owner-" + this.next++;
		}
		long now = System.currentTimeMillis();
		long leaseUntil = now + 30_000;
		long expiresAt = leaseUntil + 120_000;
		JdbcClient.StatementSpec insert;
		if (this.form.equals("alike")) {
			insert = this.jdbc.sql(ALIKE)
				.params(WORKFLOW, new SqlParameterValue(Types.VARCHAR, null), leaseUntil, expiresAt, new SqlArrayValue("text", (Object[]) keys),
						new SqlArrayValue("text", (Object[]) owners));
		}
		else {
			String[] workflows = new String[BATCH];
			Long[] leaseUntils = new Long[BATCH];
			Long[] expiresAts = new Long[BATCH];
			for (int i = 0; i < BATCH; i++) {
				workflows[i] = WORKFLOW;
				leaseUntils[i] = leaseUntil;
				expiresAts[i] = expiresAt;
			}
			insert = this.jdbc.sql(ARRAYS)
				.params(new SqlArrayValue("text", (Object[]) workflows), new SqlArrayValue("text", (Object[]) keys),
						new SqlArrayValue("text", (Object[]) new String[BATCH]),
						new SqlArrayValue("text", (Object[]) owners), new SqlArrayValue("int8", (Object[]) leaseUntils),
						new SqlArrayValue("int8", (Object[]) expiresAts));
		}
		List<String> inserted = insert.param(now).param(now).query((rs, row) -> rs.getString(2)).list();
		if (inserted.size() != BATCH) {
			throw new IllegalStateException("Inserted " + inserted.size() + " of " + BATCH);
		}
		return inserted.size();
	}

}
