package io.github.idempotency.benchmarks;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The starter's claims (first delivery and duplicate, as in {@link JdbcBenchmark}) on a
 * table that holds {@code rows} expired records of another workflow, in one {@code phase}
 * of its cleanup: {@code empty} (none of them, the table truncated: the table of
 * {@link JdbcBenchmark}),
 * {@code before} (all of them, no cleanup), {@code during} (the auto-configured
 * {@link ExpiredRecordsCleaner}, at its default pace, runs from the trial's start to its
 * end; the rows it removed a second are printed as {@code cleanup: ...}), {@code after}
 * (whatever is left removed at full speed, then the table vacuumed and analyzed), and
 * {@code alternating}: the cleanup runs through every other iteration (from its start to
 * its end, then {@link #SETTLE} for the database to settle before the next), so that
 * iterations with and without it are paired in one trial, on the same table at the same
 * time, and a slow drift of the machine or the table falls on both; and {@code flat}: no
 * cleanup, the claims of every other iteration go to a second application on a table of
 * its own that holds none of the rows ({@value #EMPTY}), so that the table with the rows
 * and an empty one are compared in one trial, paired in time, as in {@code alternating}.
 * Phases {@code before}, {@code during}, {@code alternating} and {@code flat} fill the
 * table up to {@code rows} first (bulk inserts: {@code generate_series} on PostgreSQL, the
 * sequence engine on MariaDB).
 * {@code benchmarks/cleanup.sh} runs the phases in order and prints the percentiles.
 */
@State(Scope.Benchmark)
public class CleanupBenchmark {

	/** The workflow of the expired records. */
	static final String EXPIRED = "cleanup-expired";

	/** The table of phase {@code flat}'s application without the expired rows. */
	static final String EMPTY = "idempotency_record_empty";

	private static final int CHUNK = 1_000_000;

	/** The pause after an iteration with the cleanup, before the next one starts. */
	static final long SETTLE = 2_000;

	@Param({ "postgresql" })
	public String database;

	@Param({ "before" })
	public String phase;

	@Param({ "10000000" })
	public int rows;

	ConfigurableApplicationContext context;

	volatile PaymentHandler handler;

	/** In phase {@code flat}, the application on {@link #EMPTY} and the handler that claims in it. */
	private ConfigurableApplicationContext emptyContext;

	private PaymentHandler emptyHandler;

	private PaymentHandler fullHandler;

	private JdbcClient jdbc;

	private Thread cleanup;

	private long expiredAtStart;

	private long startNanos;

	private ExpiredRecordsCleaner cleaner;

	private int iteration;

	private final AtomicLong removedAlternating = new AtomicLong();

	private long nanosAlternating;

	@Setup(Level.Trial)
	public void start() throws InterruptedException {
		this.context = BenchmarkContexts.starter("jdbc", properties(Map.of()));
		this.handler = this.context.getBean(PaymentHandler.class);
		DataSource dataSource = this.context.getBean(DataSource.class);
		this.jdbc = JdbcClient.create(dataSource);
		this.jdbc.sql("DELETE FROM idempotency_record WHERE workflow LIKE 'bench-%'").update();
		switch (this.phase) {
			// a table that never held the rows: one that a cleanup emptied is another state (after)
			case "empty" -> this.jdbc.sql("TRUNCATE TABLE idempotency_record").update();
			case "after" -> {
				JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, "idempotency_record",
						java.time.Duration.ofSeconds(10), java.time.Clock.systemUTC());
				log("removing the expired rows at full speed: " + store.deleteExpired(CleanupPace.unpaced(10_000)));
			}
			case "before", "during", "alternating", "flat" -> fill();
			default -> throw new IllegalArgumentException("Unknown phase " + this.phase);
		}
		ServersState.vacuum(this.jdbc, "idempotency_record");
		for (String key : DuplicateKeys.all()) {
			this.handler.charge(key);
		}
		if (this.phase.equals("flat")) {
			this.emptyContext = BenchmarkContexts.starter("jdbc", properties(Map.of("idempotency.jdbc.table-name", EMPTY)));
			this.jdbc.sql("TRUNCATE TABLE " + EMPTY).update();
			ServersState.vacuum(this.jdbc, EMPTY);
			this.emptyHandler = this.emptyContext.getBean(PaymentHandler.class);
			for (String key : DuplicateKeys.all()) {
				this.emptyHandler.charge(key);
			}
			this.fullHandler = this.handler;
		}
		this.cleaner = this.context.getBean(ExpiredRecordsCleaner.class);
		if (this.phase.equals("during")) {
			ExpiredRecordsCleaner cleaner = this.cleaner;
			this.expiredAtStart = expired();
			this.startNanos = System.nanoTime();
			this.cleanup = new Thread(cleaner::cleanUp, "benchmark-cleanup");
			this.cleanup.start();
		}
	}

	/**
	 * In phase {@code alternating}, starts the cleanup in every other iteration (the second,
	 * the fourth, ...); in phase {@code flat}, claims on the empty table in the first, the
	 * third, ... and on the full one in the others. A table that started empty has its
	 * statistics refreshed first ({@link ServersState#analyze}); in phase {@code flat} both
	 * tables have, so that both pay alike for the plans each connection makes again.
	 */
	@Setup(Level.Iteration)
	public void startIteration() {
		if (this.phase.equals("empty") || this.phase.equals("after")) {
			ServersState.analyze(this.jdbc, "idempotency_record");
		}
		if (this.phase.equals("flat")) {
			ServersState.analyze(this.jdbc, EMPTY);
			ServersState.analyze(this.jdbc, "idempotency_record");
			this.handler = (this.iteration++ % 2 == 1) ? this.fullHandler : this.emptyHandler;
		}
		if (this.phase.equals("alternating") && this.iteration++ % 2 == 1) {
			this.startNanos = System.nanoTime();
			this.cleanup = new Thread(() -> this.removedAlternating.addAndGet(this.cleaner.cleanUp()),
					"benchmark-cleanup");
			this.cleanup.start();
		}
	}

	/** In phase {@code alternating}, stops the iteration's cleanup, and lets the database settle. */
	@TearDown(Level.Iteration)
	public void endIteration() throws InterruptedException {
		if (this.phase.equals("alternating") && this.cleanup != null) {
			this.cleanup.interrupt();
			this.cleanup.join();
			this.cleanup = null;
			this.nanosAlternating += System.nanoTime() - this.startNanos;
			Thread.sleep(SETTLE);
		}
	}

	@Benchmark
	public Receipt starterFirst(Keys keys) {
		return this.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt starterDuplicate(DuplicateKeys keys) {
		return this.handler.charge(keys.next());
	}

	@TearDown(Level.Trial)
	public void stop() throws InterruptedException {
		try {
			if (this.phase.equals("alternating")) {
				double seconds = this.nanosAlternating / 1e9;
				// the line benchmarks/cleanup.sh reads
				System.out.println(String.format(Locale.ROOT, "cleanup: %d rows in %.1f s, %.0f rows/s",
						this.removedAlternating.get(), seconds, this.removedAlternating.get() / seconds));
			}
			if (this.cleanup != null) {
				boolean finished = !this.cleanup.isAlive();
				double seconds = (System.nanoTime() - this.startNanos) / 1e9;
				this.cleanup.interrupt();
				this.cleanup.join();
				long removed = this.expiredAtStart - expired();
				// the line benchmarks/cleanup.sh reads
				System.out.println(String.format(Locale.ROOT, "cleanup: %d rows in %.1f s, %.0f rows/s%s", removed,
						seconds, removed / seconds, finished ? " (finished before the trial's end: rows too few)" : ""));
			}
		}
		finally {
			this.context.close();
			if (this.emptyContext != null) {
				this.emptyContext.close();
			}
		}
	}

	/** The starter's settings on {@link #database}, with {@code more}. */
	private Map<String, Object> properties(Map<String, Object> more) {
		Map<String, Object> properties = new HashMap<>(StarterProperties.SERVERS);
		if (this.database.equals("mariadb")) {
			properties.put("spring.datasource.url", Servers.mariadb());
		}
		properties.putAll(more);
		return properties;
	}

	/** Adds expired rows until there are {@code rows}, a million a statement. */
	private void fill() {
		long missing = this.rows - expired();
		String run = UUID.randomUUID().toString().substring(0, 8);
		// expired a day ago, a millisecond apart, in key order
		long base = System.currentTimeMillis() - 86_400_000L;
		for (long done = 0; done < missing; done += CHUNK) {
			long count = Math.min(CHUNK, missing - done);
			String columns = "INSERT INTO idempotency_record (workflow, idempotency_key, status, owner, attempt, "
					+ "lease_until, response, created_at, updated_at, expires_at) ";
			String sql = this.database.equals("mariadb")
					? columns + "SELECT '" + EXPIRED + "', CONCAT('" + run + "-', " + done + " + seq), 'COMPLETED', "
							+ "'expired', 1, "
							+ "0, '{\"id\":\"expired\"}', 0, 0, " + (base + done) + " + seq FROM seq_1_to_" + count
					: columns + "SELECT '" + EXPIRED + "', '" + run + "-' || (" + done + " + k), 'COMPLETED', 'expired', 1, 0, "
							+ "'{\"id\":\"expired\"}', 0, 0, " + (base + done) + " + k FROM generate_series(1, "
							+ count + ") k";
			this.jdbc.sql(sql).update();
			log("filled " + (done + count) + " of " + missing);
		}
	}

	private long expired() {
		return this.jdbc.sql("SELECT COUNT(*) FROM idempotency_record WHERE workflow = ?")
			.param(EXPIRED)
			.query(Long.class)
			.single();
	}

	private static void log(String message) {
		System.out.println("cleanup benchmark: " + message);
	}

}
