package io.github.idempotency.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.github.idempotency.IdempotencyTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
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
 * <li>{@code bare*}: the protocol by hand with {@code JdbcClient} in a table of its own
 * ({@link MariaDbBare}): {@code INSERT IGNORE} (claim), then {@code UPDATE ... WHERE owner = ?}
 * (complete); a duplicate: the insert inserts nothing, then one {@code SELECT} reads the
 * stored result.
 * A batch: one {@code INSERT IGNORE} of every row, then the completions as one JDBC batch
 * in one transaction (what the starter sends on MariaDB); a duplicate batch: the insert,
 * then one {@code SELECT ... IN}.</li>
 * <li>{@code bareOnStarterTable*}: the same by hand in the starter's own table (see
 * {@link MariaDbBare.OnStarterTable}).</li>
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
	public Receipt bareFirst(MariaDbBare state, Keys keys) {
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
	public Receipt bareDuplicate(MariaDbBare state, DuplicateKeys keys) {
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
	public List<Receipt> bareBatchInTransactionFirst(MariaDbBare state, BatchSize size, Keys keys) {
		return state.servers.transactions.execute((tx) -> bareBatchFirst(state, size, keys));
	}

	@Benchmark
	public List<Receipt> bareBatchFirst(MariaDbBare state, BatchSize size, Keys keys) {
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
	public List<Receipt> bareOnStarterTableBatchFirst(MariaDbBare.OnStarterTable state, BatchSize size, Keys keys) {
		return bareBatchFirst(state, size, keys);
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableBatchInTransactionFirst(MariaDbBare.OnStarterTable state, BatchSize size,
			Keys keys) {
		return state.servers.transactions.execute((tx) -> bareBatchFirst(state, size, keys));
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableBatchDuplicate(MariaDbBare.OnStarterTable state, BatchSize size) {
		return bareBatchDuplicate(state, size);
	}

	@Benchmark
	public List<Receipt> bareBatchDuplicate(MariaDbBare state, BatchSize size) {
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

}
