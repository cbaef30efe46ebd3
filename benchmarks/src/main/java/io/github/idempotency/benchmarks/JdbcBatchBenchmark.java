package io.github.idempotency.benchmarks;

import java.time.Duration;
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
import io.github.idempotency.IdempotentRequest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A batch of {@code batch} messages (1, 10, 100, 500) on PostgreSQL, autocommit, one Hikari
 * pool: one benchmark operation is one batch, so the rate per message is the score times
 * {@code batch}.
 * <ul>
 * <li>{@code starter*}: {@code IdempotencyTemplate.executeAll} on the starter's jdbc store:
 * for a first delivery one insert for the batch and one completion statement
 * ({@code UPDATE ... FROM unnest}) fenced by each claim's owner; for a duplicate batch
 * (its workflow's claims mostly answered) one statement that reads what exists and
 * inserts the rest.</li>
 * <li>{@code bare*}: the batch protocol by hand on {@code JdbcClient}, in a table of its own
 * ({@link JdbcBatchBare}): {@code INSERT ... SELECT ... FROM unnest ON CONFLICT DO NOTHING
 * RETURNING}, then one {@code UPDATE ... FROM unnest} (first: 2 statements, 2 commits); a
 * duplicate batch: the insert inserts nothing, then one {@code SELECT ... = ANY} reads the
 * stored results.</li>
 * <li>{@code bareOnStarterTable*}: the same by hand in the starter's own table (see
 * {@link JdbcBatchBare.OnStarterTable}): what the record's width costs, apart from the
 * protocol.</li>
 * <li>{@code *InTransaction*}: the same inside one transaction per batch (a
 * {@code TransactionTemplate}): the starter's claims and completion join it, the bare
 * protocol's two statements run in it, one commit.</li>
 * <li>{@code springIntegration*}, {@code camel*}: the peers have no batch API; each message
 * of the batch is one call of their per-message API, as in {@link JdbcBenchmark}.</li>
 * </ul>
 * Duplicate batches of the starter and the bare protocol walk {@value BatchDuplicates#COUNT}
 * keys finished before the measurement, never one key twice in a batch. Both tables hold
 * {@value #FILLER_ROWS} rows of another workflow besides, their statistics taken with
 * them (see {@link #fill}).
 */
public class JdbcBatchBenchmark {

	static final String WORKFLOW = "bench-batch";

	static final Duration RETENTION = Duration.ofMinutes(2);

	/** The rows of another workflow each table holds while measured. */
	static final int FILLER_ROWS = 100_000;

	/** The filler rows of the starter's table (see {@link #fill}). */
	static final String STARTER_FILLER = "INSERT INTO idempotency_record (workflow, idempotency_key, status, owner, "
			+ "attempt, lease_until, response, created_at, updated_at, expires_at) SELECT 'filler', 'filler-' || k, "
			+ "'COMPLETED', 'filler', 1, 0, '{}', 0, 0, " + Long.MAX_VALUE + " FROM generate_series(1, ?) k";

	@Benchmark
	public List<Receipt> starterFirst(Starter state, BatchSize size, Keys keys) {
		return state.charge(size.fresh(keys));
	}

	@Benchmark
	public List<Receipt> starterDuplicate(Starter state, BatchSize size) {
		return state.charge(state.duplicates.next(size.batch));
	}

	@Benchmark
	public List<Receipt> starterInTransactionFirst(Starter state, BatchSize size, Keys keys) {
		return state.transactions.execute((tx) -> state.charge(size.fresh(keys)));
	}

	@Benchmark
	public List<Receipt> starterInTransactionDuplicate(Starter state, BatchSize size) {
		return state.transactions.execute((tx) -> state.charge(state.duplicates.next(size.batch)));
	}

	@Benchmark
	public List<Receipt> bareInTransactionFirst(JdbcBatchBare state, BatchSize size, Keys keys) {
		return state.servers.transactions.execute((tx) -> bareFirst(state, size, keys));
	}

	@Benchmark
	public List<Receipt> bareFirst(JdbcBatchBare state, BatchSize size, Keys keys) {
		List<String> batch = size.fresh(keys);
		String owner = Owners.next();
		if (state.claim(batch, owner) != batch.size()) {
			throw new IllegalStateException("Not a first delivery: " + batch.get(0));
		}
		List<Receipt> receipts = new ArrayList<>(batch.size());
		String[] responses = new String[batch.size()];
		for (int i = 0; i < responses.length; i++) {
			Receipt receipt = Receipt.of(batch.get(i));
			receipts.add(receipt);
			responses[i] = state.servers.writer.writeValueAsString(receipt);
		}
		if (state.complete(batch, owner, responses) != batch.size()) {
			throw new IllegalStateException("Lost a claim of " + batch.get(0));
		}
		return receipts;
	}

	@Benchmark
	public List<Receipt> bareDuplicate(JdbcBatchBare state, BatchSize size) {
		List<String> batch = state.duplicates.next(size.batch);
		if (state.claim(batch, Owners.next()) != 0) {
			throw new IllegalStateException("Not a duplicate: " + batch.get(0));
		}
		return state.responses(batch);
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableFirst(JdbcBatchBare.OnStarterTable state, BatchSize size, Keys keys) {
		return bareFirst(state, size, keys);
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableInTransactionFirst(JdbcBatchBare.OnStarterTable state, BatchSize size,
			Keys keys) {
		return state.servers.transactions.execute((tx) -> bareFirst(state, size, keys));
	}

	@Benchmark
	public List<Receipt> bareOnStarterTableDuplicate(JdbcBatchBare.OnStarterTable state, BatchSize size) {
		return bareDuplicate(state, size);
	}

	@Benchmark
	public int springIntegrationFirst(JdbcBenchmark.SpringIntegration state, BatchSize size, Keys keys) {
		int accepted = 0;
		for (int i = 0; i < size.batch; i++) {
			accepted += state.selector.accept(PeerMessages.of(keys.next())) ? 1 : 0;
		}
		return expect(size.batch, accepted);
	}

	@Benchmark
	public int springIntegrationDuplicate(JdbcBenchmark.SpringIntegration state, BatchSize size,
			DuplicateKeys keys) {
		int accepted = 0;
		for (int i = 0; i < size.batch; i++) {
			accepted += state.selector.accept(PeerMessages.of(keys.next())) ? 1 : 0;
		}
		return expect(0, accepted);
	}

	@Benchmark
	public int camelFirst(JdbcBenchmark.Camel state, BatchSize size, Keys keys) {
		int added = 0;
		for (int i = 0; i < size.batch; i++) {
			String key = keys.next();
			added += (state.repository.add(key) && state.repository.confirm(key)) ? 1 : 0;
		}
		return expect(size.batch, added);
	}

	@Benchmark
	public int camelDuplicate(JdbcBenchmark.Camel state, BatchSize size, DuplicateKeys keys) {
		int added = 0;
		for (int i = 0; i < size.batch; i++) {
			added += state.repository.add(keys.next()) ? 1 : 0;
		}
		return expect(0, added);
	}

	/**
	 * Makes {@code table} a table in service: {@value #FILLER_ROWS} finished rows of another
	 * workflow that never expire (added once), then its statistics taken. The local
	 * PostgreSQL runs with autovacuum off, so a table left nearly empty before a run keeps
	 * the plans made for an empty table while each batch adds to it: a join with it planned
	 * as a sequential scan (the starter's batch claim reads the rows that exist) then reads
	 * the whole table for every batch, slower at every iteration. With autovacuum, a table's
	 * statistics follow its growth and its plans are made again.
	 * @param jdbc the database
	 * @param table the table
	 * @param insertFinished an {@code INSERT ... SELECT} of the table's row for the
	 * workflow {@code 'filler'} and the key {@code k} of {@code generate_series(1, ?) k}
	 */
	static void fill(JdbcClient jdbc, String table, String insertFinished) {
		jdbc.sql(insertFinished + " ON CONFLICT DO NOTHING").param(FILLER_ROWS).update();
		ServersState.vacuum(jdbc, table);
	}

	/**
	 * Runs one batch through the starter's {@link IdempotencyTemplate#executeAll}, each key
	 * a request of {@link #WORKFLOW} kept for {@link #RETENTION}.
	 * @param template the starter's template
	 * @param keys the keys of the batch
	 * @return the receipts, in the order of the keys
	 */
	static List<Receipt> charge(IdempotencyTemplate template, List<String> keys) {
		List<IdempotentRequest> requests = new ArrayList<>(keys.size());
		for (String key : keys) {
			requests.add(IdempotentRequest.of(WORKFLOW, key).withRetention(RETENTION));
		}
		return template.executeAll(requests, Receipt.class, (request) -> Receipt.of((String) request.key()));
	}

	static int expect(int expected, int actual) {
		if (actual != expected) {
			throw new IllegalStateException("Expected " + expected + " new messages, got " + actual);
		}
		return actual;
	}

	/**
	 * The starter with {@code idempotency.backend=jdbc}, called through its
	 * {@link IdempotencyTemplate}.
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
			return StarterProperties.SERVERS;
		}

		@Override
		@Setup(Level.Trial)
		public void start() {
			super.start();
			this.template = this.context.getBean(IdempotencyTemplate.class);
			this.transactions = new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class));
			for (List<String> keys : this.duplicates.all(100)) {
				charge(keys);
			}
			fill(JdbcClient.create(this.context.getBean(DataSource.class)), JdbcBatchBare.OnStarterTable.TABLE,
					STARTER_FILLER);
		}

		List<Receipt> charge(List<String> keys) {
			return JdbcBatchBenchmark.charge(this.template, keys);
		}

	}

}
