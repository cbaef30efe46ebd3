package io.github.idempotency.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.DataSource;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.benchmarks.JdbcBatchBenchmark.BatchDuplicates;
import io.github.idempotency.benchmarks.JdbcBatchBenchmark.BatchSize;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * MariaDB on loopback ({@link Servers#mariadb()}), autocommit, one Hikari pool: one message
 * at a time ({@code starterFirst}, {@code starterDuplicate}, {@code bareFirst},
 * {@code bareDuplicate}, as in {@link JdbcBenchmark}) and batches of {@code batch} messages
 * ({@code *Batch*}, one benchmark operation a batch, as in {@link JdbcBatchBenchmark}).
 * <ul>
 * <li>{@code starter*}: the proxied {@code @Idempotent} method, or
 * {@code IdempotencyTemplate.executeAll}, on the starter's jdbc store in its shipped
 * MariaDB table.</li>
 * <li>{@code bare*}: the protocol by hand with {@code JdbcClient} in a table of its own:
 * {@code INSERT IGNORE} (claim), then {@code UPDATE ... WHERE owner = ?} (complete); a
 * duplicate: the insert inserts nothing, then one {@code SELECT} reads the stored result.
 * A batch: one {@code INSERT IGNORE} of every row, then the completions as one JDBC batch
 * in one transaction (what the starter sends on MariaDB); a duplicate batch: the insert,
 * then one {@code SELECT ... IN}.</li>
 * <li>{@code bareOnStarterTable*}: the same by hand in the starter's own table (see
 * {@link BareOnStarterTable}).</li>
 * <li>{@code *BatchInTransaction*}: the same inside one transaction per batch (a
 * {@code TransactionTemplate}): the starter's claims and completions join it, the bare
 * protocol's statements run in it, one commit.</li>
 * </ul>
 * Both tables hold {@value JdbcBatchBenchmark#FILLER_ROWS} rows of another workflow, their
 * statistics taken with them.
 */
public class MariaDbBenchmark {

	/** The starter's filler rows ({@link JdbcBatchBenchmark#STARTER_FILLER}) in MariaDB's SQL. */
	static final String STARTER_FILLER = "INSERT IGNORE INTO idempotency_record (workflow, idempotency_key, status, "
			+ "owner, attempt, lease_until, response, created_at, updated_at, expires_at) SELECT 'filler', "
			+ "CONCAT('filler-', seq), 'COMPLETED', 'filler', 1, 0, '{}', 0, 0, " + Long.MAX_VALUE
			+ " FROM seq_1_to_" + JdbcBatchBenchmark.FILLER_ROWS;

	@Benchmark
	public Receipt starterFirst(Starter state, Keys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt starterDuplicate(Starter state, DuplicateKeys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt bareFirst(Bare state, Keys keys) {
		String key = keys.next();
		String owner = Owners.next();
		if (state.claim(List.of(key), owner) != 1) {
			throw new IllegalStateException("Not a first delivery: " + key);
		}
		Receipt receipt = Receipt.of(key);
		if (state.complete(key, owner, state.servers.writer.writeValueAsString(receipt)) != 1) {
			throw new IllegalStateException("Lost the claim of " + key);
		}
		return receipt;
	}

	@Benchmark
	public Receipt bareDuplicate(Bare state, DuplicateKeys keys) {
		String key = keys.next();
		if (state.claim(List.of(key), Owners.next()) != 0) {
			throw new IllegalStateException("Not a duplicate: " + key);
		}
		return state.responses(List.of(key)).get(0);
	}

	@Benchmark
	public List<Receipt> starterBatchFirst(Starter state, BatchSize size, Keys keys) {
		return JdbcBatchBenchmark.charge(state.template, size.fresh(keys));
	}

	@Benchmark
	public List<Receipt> starterBatchDuplicate(Starter state, BatchSize size) {
		return JdbcBatchBenchmark.charge(state.template, state.duplicates.next(size.batch));
	}

	@Benchmark
	public List<Receipt> starterBatchInTransactionFirst(Starter state, BatchSize size, Keys keys) {
		return state.transactions.execute((tx) -> JdbcBatchBenchmark.charge(state.template, size.fresh(keys)));
	}

	@Benchmark
	public List<Receipt> bareBatchInTransactionFirst(Bare state, BatchSize size, Keys keys) {
		return state.servers.transactions.execute((tx) -> bareBatchFirst(state, size, keys));
	}

	@Benchmark
	public List<Receipt> bareBatchFirst(Bare state, BatchSize size, Keys keys) {
		List<String> batch = size.fresh(keys);
		String owner = Owners.next();
		if (state.claim(batch, owner) != batch.size()) {
			throw new IllegalStateException("Not a first delivery: " + batch.get(0));
		}
		List<Receipt> receipts = new ArrayList<>(batch.size());
		List<String> responses = new ArrayList<>(batch.size());
		for (String key : batch) {
			Receipt receipt = Receipt.of(key);
			receipts.add(receipt);
			responses.add(state.servers.writer.writeValueAsString(receipt));
		}
		JdbcBatchBenchmark.expect(batch.size(), state.completeAll(batch, owner, responses));
		return receipts;
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableBatchFirst(BareOnStarterTable state, BatchSize size, Keys keys) {
		return bareBatchFirst(state, size, keys);
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableBatchInTransactionFirst(BareOnStarterTable state, BatchSize size,
			Keys keys) {
		return state.servers.transactions.execute((tx) -> bareBatchFirst(state, size, keys));
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableBatchDuplicate(BareOnStarterTable state, BatchSize size) {
		return bareBatchDuplicate(state, size);
	}

	@Benchmark
	public List<Receipt> bareBatchDuplicate(Bare state, BatchSize size) {
		List<String> batch = state.duplicates.next(size.batch);
		if (state.claim(batch, Owners.next()) != 0) {
			throw new IllegalStateException("Not a duplicate: " + batch.get(0));
		}
		return state.responses(batch);
	}

	/**
	 * The starter with {@code idempotency.backend=jdbc} on MariaDB, both the proxied
	 * handler and the {@link IdempotencyTemplate}; the keys of {@link BatchDuplicates}
	 * delivered in batches of 100 before the measurement.
	 */
	@State(Scope.Benchmark)
	public static class Starter extends StarterState {

		final BatchDuplicates duplicates = new BatchDuplicates();

		IdempotencyTemplate template;

		TransactionTemplate transactions;

		@Override
		protected String backend() {
			return "jdbc";
		}

		@Override
		protected Map<String, Object> properties() {
			return Map.of("spring.datasource.url", Servers.mariadb(), "idempotency.jdbc.initialize-schema", "always");
		}

		@Override
		@Setup(Level.Trial)
		public void start() {
			super.start();
			this.template = this.context.getBean(IdempotencyTemplate.class);
			this.transactions = new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class));
			for (List<String> keys : this.duplicates.all(100)) {
				JdbcBatchBenchmark.charge(this.template, keys);
			}
			JdbcClient jdbc = JdbcClient.create(this.context.getBean(DataSource.class));
			jdbc.sql(STARTER_FILLER).update();
			ServersState.vacuum(jdbc, "idempotency_record");
		}

	}

	/**
	 * The clients of {@link ServersState}, on MariaDB ({@link BenchmarkContexts#mariadb()}).
	 */
	@State(Scope.Benchmark)
	public static class MariaDbServers extends ServersState {

		@Override
		protected ConfigurableApplicationContext context() {
			return BenchmarkContexts.mariadb();
		}

	}

	/**
	 * The protocol by hand in a table of its own ({@value #TABLE}, the same primary key
	 * as the starter's, 7 columns and an index on {@code expires_at}), on the clients of
	 * {@link MariaDbServers}.
	 */
	@State(Scope.Benchmark)
	public static class Bare {

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

	}

	/**
	 * The same protocol by hand in the starter's own table ({@code idempotency_record}, its
	 * 14 columns and two indexes, the filler rows included), under a workflow of its own,
	 * writing what the starter writes (as {@link JdbcBatchBenchmark.BareOnStarterTable} on
	 * PostgreSQL): what the record's width costs, apart from the protocol.
	 */
	@State(Scope.Benchmark)
	public static class BareOnStarterTable extends Bare {

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
			return STARTER_FILLER;
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
