package io.github.idempotency.store.jdbc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.observe.StoreOperation;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggerConfiguration;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A soak of the jdbc store: 16 threads deliver a small key space for 20 seconds
 * ({@code IDEMPOTENCY_SOAK_SECONDS} overrides), so that claims, takeovers, completions,
 * releases, rollbacks and the cleanup collide on the same rows; then every key's business
 * effect is counted: exactly one for a completed key, none for a failed one.
 * <p>
 * The key space is {@value #SLOTS} slots; each holds one key until a delivery sees that
 * key finished, then the next key of that slot. Every delivery picks a slot at random and
 * one way to deliver ({@link Delivery}); a delivery that did not finish its key (a
 * conflict, a rollback, a crash, a release) leaves it in its slot, so it is delivered
 * again, by whichever thread picks the slot next, until it is finished. The business
 * effect is a row of {@value #EFFECTS}, written inside the run:
 * <ul>
 * <li>in a transaction on the store's data source (half of them reading first), which
 * the claim and the completion join: a crash before the commit (the transaction rolls
 * back after the completion), a retryable failure and a permanent one roll the effect and
 * the claim back together, so the redelivery legitimately runs the key again; a permanent
 * failure is stored afterwards, and that key is finished with no effect;</li>
 * <li>without a transaction, with the lease renewed: the effect commits at once, before
 * the completion, and such a run never gives up its claim after writing it (its failures
 * are thrown before the effect); a few slow runs outlive their first lease, held by its
 * renewals while the other threads try to take their keys over;</li>
 * <li>never, by claims made without a transaction with a {@link #CRASH_LEASE short lease}
 * and dropped (a crashed consumer): the later deliveries take them over once the lease
 * runs out; half of them are kept only briefly after their lease, so the cleanup or a
 * claim finds them expired.</li>
 * </ul>
 * A cleanup thread deletes expired records as each crashed claim, and each record of a
 * few uncounted keys kept for {@link #SCRATCH_RETENTION}, expires. Finished records of
 * the counted keys are kept for a day, so none of them legitimately expires: a run
 * counted twice is a bug. At the end every unfinished key is delivered until it is
 * finished, then each key's effects are compared with its record. Each database is a
 * small subclass.
 */
abstract class JdbcSoakTests {

	static final String TABLE = "idempotency_soak_test";

	static final String EFFECTS = "soak_effect";

	private static final int THREADS = 16;

	private static final int SLOTS = 24;

	private static final int SCRATCH_KEYS = 6;

	/** The lease of the crashed claims: the deliveries after them take them over. */
	private static final Duration CRASH_LEASE = Duration.ofMillis(300);

	/**
	 * The lease of the engine's runs without a transaction, renewed while they run: long
	 * enough that a live run is not taken over while the machine is busy.
	 */
	private static final Duration LEASE = Duration.ofSeconds(3);

	/**
	 * The lease of the slow runs without a transaction, which outlive it: renewed every
	 * 400 ms, so only a stall of the renewal longer than 800 ms loses it.
	 */
	private static final Duration SLOW_LEASE = Duration.ofMillis(1200);

	private static final int MOST_SLOW_RUNS = 2;

	private static final Duration RETENTION = Duration.ofDays(1);

	private static final Duration SCRATCH_RETENTION = Duration.ofMillis(50);

	private static final Duration DRAIN = Duration.ofSeconds(15);

	private final String workflow = "soak-" + UUID.randomUUID();

	private final JdbcClient jdbc;

	private final JdbcIdempotencyStore store;

	private final IdempotencyEngine engine;

	private final IdempotentOperation operation;

	private final IdempotentOperation slow;

	private final IdempotentOperation scratch;

	private final Semaphore slowRuns = new Semaphore(MOST_SLOW_RUNS);

	private final Map<String, @Nullable LogLevel> quietened = new LinkedHashMap<>();

	private final TransactionTemplate transactions;

	private final AtomicIntegerArray generations = new AtomicIntegerArray(SLOTS);

	/** The most recently finished keys, for redeliveries of finished keys. */
	private final AtomicReferenceArray<@Nullable String> finished = new AtomicReferenceArray<>(256);

	private final AtomicLong finishedCount = new AtomicLong();

	/** Every counted key delivered, with what happened to it, for the failure report. */
	private final Map<String, Queue<String>> history = new ConcurrentHashMap<>();

	/** Counted keys whose run without a transaction wrote its effect but did not return. */
	private final Set<String> unsettled = ConcurrentHashMap.newKeySet();

	private final DelayQueue<Expiry> expiries = new DelayQueue<>();

	private final Counters counters = new Counters();

	private final long start = System.nanoTime();

	JdbcSoakTests(DataSource dataSource, String platform) {
		this.jdbc = JdbcClient.create(dataSource);
		TestDatabases.createTable(dataSource, platform, TABLE);
		this.jdbc.sql("DROP TABLE IF EXISTS " + EFFECTS).update();
		this.jdbc.sql("CREATE TABLE " + EFFECTS + " (effect_key VARCHAR(255) NOT NULL, run_id VARCHAR(64) NOT NULL)")
			.update();
		this.store = new JdbcIdempotencyStore(dataSource, TABLE, Duration.ofSeconds(5), Clock.systemUTC());
		this.engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseTtl(LEASE)
						.retention(RETENTION)
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ZERO)
						.build(),
				this.counters);
		this.operation = this.engine.prepare(OperationDefinition.of(this.workflow, String.class)
			.fingerprinted(false)
			.recordFailureFor(List.of(PermanentFailure.class))
			.build());
		this.slow = this.engine.prepare(OperationDefinition.of(this.workflow, String.class)
			.fingerprinted(false)
			.leaseTtl(SLOW_LEASE)
			.recordFailureFor(List.of(PermanentFailure.class))
			.build());
		this.scratch = this.engine.prepare(OperationDefinition.of(this.workflow + "-scratch", String.class)
			.fingerprinted(false)
			.retention(SCRATCH_RETENTION)
			.build());
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
	}

	/**
	 * Quietens the loggers that speak of every conflict: the MariaDB driver logs each
	 * duplicate key and lock error of a claim, the engine each takeover.
	 */
	@BeforeEach
	void quieten() {
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		for (String logger : List.of("org.mariadb.jdbc.message.server.ErrorPacket", IdempotencyEngine.class.getName())) {
			LoggerConfiguration configuration = logging.getLoggerConfiguration(logger);
			this.quietened.put(logger, (configuration != null) ? configuration.getConfiguredLevel() : null);
			logging.setLogLevel(logger, LogLevel.ERROR);
		}
	}

	@AfterEach
	void close() {
		this.engine.close();
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		this.quietened.forEach(logging::setLogLevel);
	}

	@Test
	void everyKeyIsRunOnceWhileClaimsTakeoversCompletionsReleasesAndTheCleanupCollide() throws Exception {
		Duration soak = Duration.ofSeconds(Long.parseLong(System.getenv().getOrDefault("IDEMPOTENCY_SOAK_SECONDS", "20")));
		long deadline = System.nanoTime() + soak.toNanos();
		ExecutorService executor = Executors.newFixedThreadPool(THREADS + 1);
		try {
			List<Future<?>> threads = new ArrayList<>();
			threads.add(executor.submit(() -> cleanUp(deadline)));
			for (int i = 0; i < THREADS; i++) {
				threads.add(executor.submit(() -> deliver(deadline)));
			}
			for (Future<?> thread : threads) {
				thread.get(soak.toSeconds() + 60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		long soaked = System.nanoTime();
		await().atMost(DRAIN).pollInterval(Duration.ofMillis(50)).until(() -> drain().isEmpty());
		System.out.println(report(Duration.ofNanos(soaked - this.start), Duration.ofNanos(System.nanoTime() - soaked)));

		Map<String, Effect> effects = effects();
		Map<String, Row> records = records();
		List<String> wrong = new ArrayList<>();
		int completed = 0;
		int failed = 0;
		for (String key : this.history.keySet()) {
			Row record = records.get(key);
			Effect effect = effects.getOrDefault(key, new Effect(0, null));
			if (record == null || !(record.status.equals("COMPLETED") || record.status.equals("FAILED"))) {
				wrong.add(describe(key, "is not finished: " + record, effect));
			}
			else if (record.status.equals("FAILED")) {
				failed++;
				if (effect.count != 0) {
					wrong.add(describe(key, "FAILED with " + effect.count + " effects", effect));
				}
			}
			else {
				completed++;
				if (effect.count != 1) {
					wrong.add(describe(key, "COMPLETED with " + effect.count + " effects", effect));
				}
				else if (!("\"" + effect.runId + "\"").equals(record.response)) {
					wrong.add(describe(key, "COMPLETED with the result " + record.response
							+ " of another run than its effect's " + effect.runId, effect));
				}
			}
		}
		System.out.println("soak: " + this.history.size() + " keys: " + completed + " completed, " + failed
				+ " failed; " + this.unsettled.size() + " unsettled");
		assertThat(wrong).as("keys not run exactly once").isEmpty();
		assertThat(effects.keySet()).as("effects of keys never delivered").isSubsetOf(this.history.keySet());
		assertThat(records.values()).as("records in progress").noneMatch((row) -> row.status.equals("IN_PROGRESS"));
		assertThat(completed).as("completed keys").isPositive();
		assertThat(failed).as("failed keys").isPositive();
		assertThat(this.counters.claims.sum()).as("claims").isPositive();
		assertThat(this.counters.takeovers.sum()).as("takeovers").isPositive();
		assertThat(this.counters.conflicts.sum()).as("in-progress conflicts").isPositive();
		assertThat(this.counters.rollbacks.sum()).as("rollbacks").isPositive();
		assertThat(this.counters.releases.sum()).as("releases").isPositive();
		assertThat(this.counters.crashes.sum()).as("crashed claims").isPositive();
		assertThat(this.counters.deleted.sum()).as("records deleted by the cleanup").isPositive();
		assertThat(this.counters.renewals.sum()).as("lease renewals").isPositive();
	}

	/**
	 * One delivering thread: a slot's key (now and then a scratch key or a finished key),
	 * delivered one way, until the deadline.
	 */
	private void deliver(long deadline) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		while (System.nanoTime() - deadline < 0) {
			int dice = random.nextInt(100);
			if (dice < 8) {
				deliverScratch("x-" + random.nextInt(SCRATCH_KEYS));
				continue;
			}
			if (dice < 13 && this.finishedCount.get() > 0) {
				String key = this.finished.get(random.nextInt((int) Math.min(this.finishedCount.get(), 256)));
				if (key != null) {
					deliver(key, Delivery.pick(random));
					continue;
				}
			}
			int slot = random.nextInt(SLOTS);
			int generation = this.generations.get(slot);
			String key = "s" + slot + "-g" + generation;
			if (deliver(key, Delivery.pick(random)) && this.generations.compareAndSet(slot, generation, generation + 1)) {
				this.finished.set((int) (this.finishedCount.getAndIncrement() % 256), key);
			}
		}
	}

	/**
	 * Delivers a counted key once.
	 * @return whether the key is seen finished: this run committed, or a finished record
	 * was replayed
	 */
	private boolean deliver(String key, Delivery delivery) {
		this.counters.deliveries.increment();
		Queue<String> events = this.history.computeIfAbsent(key, (k) -> new ConcurrentLinkedQueue<>());
		if (delivery == Delivery.CRASH) {
			return crash(key, events);
		}
		AtomicBoolean ran = new AtomicBoolean();
		AtomicBoolean wrote = new AtomicBoolean();
		try {
			Object result;
			if (delivery.inTransaction) {
				boolean readFirst = ThreadLocalRandom.current().nextBoolean();
				result = this.transactions.execute((status) -> {
					if (readFirst) {
						// a business read before the call: MariaDB's REPEATABLE READ takes its snapshot here
						this.jdbc.sql("SELECT COUNT(*) FROM " + EFFECTS + " WHERE effect_key = :key")
							.param("key", key)
							.query(Long.class)
							.single();
					}
					Object value = execute(this.operation, key, () -> run(key, delivery, ran, wrote));
					if (delivery == Delivery.ROLLBACK) {
						// the crash comes after the completion, before the commit
						status.setRollbackOnly();
					}
					return value;
				});
			}
			else if (delivery == Delivery.SLOW_LEASED && this.slowRuns.tryAcquire()) {
				try {
					result = execute(this.slow, key, () -> run(key, delivery, ran, wrote));
				}
				finally {
					this.slowRuns.release();
				}
			}
			else {
				Delivery leased = (delivery == Delivery.SLOW_LEASED) ? Delivery.LEASED : delivery;
				result = execute(this.operation, key, () -> run(key, leased, ran, wrote));
			}
			if (!ran.get()) {
				this.counters.duplicates.increment();
				event(events, delivery, "duplicate " + result);
				return true;
			}
			if (delivery == Delivery.ROLLBACK) {
				this.counters.rollbacks.increment();
				event(events, delivery, "ran " + result + ", rolled back");
				return false;
			}
			event(events, delivery, "ran " + result + ", committed");
			return true;
		}
		catch (IdempotencyInProgressException ex) {
			this.counters.conflicts.increment();
			event(events, delivery, "in progress");
			return false;
		}
		catch (IdempotentFailureReplayedException ex) {
			this.counters.failureReplays.increment();
			event(events, delivery, "failure replayed");
			return true;
		}
		catch (RetryableFailure ex) {
			(delivery.inTransaction ? this.counters.rollbacks : this.counters.releases).increment();
			event(events, delivery, "ran " + ex.getMessage() + ", failed retryably");
			return false;
		}
		catch (PermanentFailure ex) {
			this.counters.permanentFailures.increment();
			if (delivery.inTransaction) {
				this.counters.rollbacks.increment();
			}
			event(events, delivery, "ran " + ex.getMessage() + ", failed permanently");
			return false;
		}
		catch (RuntimeException ex) {
			if (wrote.get() && !delivery.inTransaction) {
				this.unsettled.add(key);
			}
			this.counters.unexpected(ex);
			event(events, delivery, (ran.get() ? "ran, " : "") + (wrote.get() ? "wrote, " : "") + "threw " + ex);
			return false;
		}
	}

	/**
	 * The body of a counted key's run: writes the business effect, except where a run
	 * without a transaction fails (it fails before writing, so it never gives up a claim
	 * whose effect is written), and fails as the delivery says.
	 */
	private String run(String key, Delivery delivery, AtomicBoolean ran, AtomicBoolean wrote) {
		ran.set(true);
		this.counters.claims.increment();
		if (IdempotencyContext.current().attempt() > 1) {
			this.counters.takeovers.increment();
		}
		String runId = UUID.randomUUID().toString();
		if (delivery == Delivery.RETRYABLE_LEASED) {
			throw new RetryableFailure(runId);
		}
		if (delivery == Delivery.PERMANENT_LEASED) {
			throw new PermanentFailure(runId);
		}
		this.jdbc.sql("INSERT INTO " + EFFECTS + " (effect_key, run_id) VALUES (:key, :runId)")
			.param("key", key)
			.param("runId", runId)
			.update();
		wrote.set(true);
		if (delivery == Delivery.SLOW_LEASED) {
			outliveTheLease(key);
		}
		if (delivery == Delivery.RETRYABLE_IN_TRANSACTION) {
			throw new RetryableFailure(runId);
		}
		if (delivery == Delivery.PERMANENT_IN_TRANSACTION) {
			throw new PermanentFailure(runId);
		}
		return runId;
	}

	/**
	 * Keeps a run without a transaction going until its first lease has run out, while the
	 * other threads keep claiming its key, and its lease was renewed: it must still own the
	 * key (else its completion fails and the key's effects show it).
	 */
	private void outliveTheLease(String key) {
		RecordId id = new RecordId(this.workflow, key);
		Instant firstLease = this.store.find(id).orElseThrow().leaseUntil();
		await().atMost(SLOW_LEASE.multipliedBy(5))
			.pollInterval(Duration.ofMillis(25))
			.until(() -> Instant.now().isAfter(firstLease) && this.store.find(id)
				.filter((record) -> record.leaseUntil().isAfter(firstLease))
				.isPresent());
		this.counters.slowRuns.increment();
	}

	/**
	 * A consumer that claims the key without a transaction and crashes: the claim is never
	 * finished. Half of them are kept only briefly after their lease.
	 */
	private boolean crash(String key, Queue<String> events) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		boolean brief = random.nextBoolean();
		Duration retention = brief ? Duration.ofMillis(1 + random.nextInt(100)) : RETENTION;
		try {
			ClaimResult claim = this.store.claim(new ClaimRequest(new RecordId(this.workflow, key),
					"crash-" + UUID.randomUUID(), null, CRASH_LEASE, retention));
			event(events, Delivery.CRASH, claim.outcome() + " attempt " + claim.record().attempt() + " until "
					+ claim.record().leaseUntil() + (brief ? " kept until " + claim.record().expiresAt() : ""));
			switch (claim.outcome()) {
				case ACQUIRED -> {
					this.counters.claims.increment();
					this.counters.crashes.increment();
					if (claim.isTakeover()) {
						this.counters.takeovers.increment();
					}
					if (brief) {
						this.expiries.add(new Expiry(claim.record().expiresAt()));
					}
					return false;
				}
				case IN_PROGRESS -> {
					this.counters.conflicts.increment();
					return false;
				}
				case DUPLICATE -> {
					this.counters.duplicates.increment();
					return true;
				}
				case FAILED -> {
					this.counters.failureReplays.increment();
					return true;
				}
				default -> throw new IllegalStateException("Unexpected " + claim);
			}
		}
		catch (RuntimeException ex) {
			this.counters.unexpected(ex);
			event(events, Delivery.CRASH, "threw " + ex);
			return false;
		}
	}

	/**
	 * Delivers an uncounted key whose records are kept for {@link #SCRATCH_RETENTION}, so
	 * that the cleanup deletes rows while they are claimed again.
	 */
	private void deliverScratch(String key) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		try {
			switch (random.nextInt(3)) {
				case 0 -> this.transactions.execute((status) -> execute(this.scratch, key, () -> "tx"));
				case 1 -> execute(this.scratch, key, () -> "leased");
				default -> {
					this.store.claim(new ClaimRequest(new RecordId(this.scratch.workflow(), key),
							"crash-" + UUID.randomUUID(), null, CRASH_LEASE, SCRATCH_RETENTION));
				}
			}
			this.expiries.add(new Expiry(Instant.now().plus(CRASH_LEASE).plus(SCRATCH_RETENTION)));
		}
		catch (IdempotencyInProgressException ex) {
			this.counters.scratchConflicts.increment();
		}
		catch (RuntimeException ex) {
			this.counters.unexpected(ex);
		}
	}

	/**
	 * The cleanup: deletes expired records each time one of the brief records expires.
	 */
	private void cleanUp(long deadline) {
		try {
			while (System.nanoTime() - deadline < 0) {
				Expiry next = this.expiries.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
				if (next == null) {
					return;
				}
				this.expiries.drainTo(new ArrayList<>());
				try {
					this.counters.cleanups.increment();
					this.counters.deleted.add(this.store.deleteExpired(5));
				}
				catch (RuntimeException ex) {
					this.counters.cleanupErrors.increment();
					this.counters.unexpected(ex);
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Delivers each unfinished counted key once more, in a transaction that commits; no
	 * more crashes.
	 * @return the keys still unfinished
	 */
	private List<String> drain() {
		Map<String, Row> records = records();
		List<String> unfinished = new ArrayList<>();
		for (String key : this.history.keySet()) {
			Row record = records.get(key);
			if (record == null || record.status.equals("IN_PROGRESS") || record.expiresAt <= System.currentTimeMillis()) {
				if (!deliver(key, Delivery.COMMIT)) {
					unfinished.add(key);
				}
			}
		}
		return unfinished;
	}

	private @Nullable Object execute(IdempotentOperation operation, String key, IdempotencyEngine.Action action) {
		try {
			return this.engine.execute(operation, key, null, action);
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private Map<String, Row> records() {
		Map<String, Row> records = new TreeMap<>();
		this.jdbc.sql("SELECT idempotency_key, status, response, expires_at FROM " + TABLE + " WHERE workflow = :workflow")
			.param("workflow", this.workflow)
			.query((rs, row) -> records.put(rs.getString(1),
					new Row(rs.getString(2), rs.getString(3), rs.getLong(4))))
			.list();
		return records;
	}

	private Map<String, Effect> effects() {
		Map<String, Effect> effects = new TreeMap<>();
		this.jdbc.sql("SELECT effect_key, COUNT(*), MIN(run_id) FROM " + EFFECTS + " GROUP BY effect_key")
			.query((rs, row) -> effects.put(rs.getString(1), new Effect(rs.getLong(2), rs.getString(3))))
			.list();
		return effects;
	}

	private void event(Queue<String> events, Delivery delivery, String what) {
		events.add(String.format("%6d ms %s %s: %s", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - this.start),
				Thread.currentThread().getName(), delivery, what));
	}

	private String describe(String key, String problem, Effect effect) {
		List<String> runs = this.jdbc.sql("SELECT run_id FROM " + EFFECTS + " WHERE effect_key = :key")
			.param("key", key)
			.query(String.class)
			.list();
		return key + " " + problem + " (effects of runs " + runs + (this.unsettled.contains(key) ? ", unsettled" : "")
				+ "):\n  " + String.join("\n  ", this.history.get(key));
	}

	private String report(Duration soaked, Duration drained) {
		Counters c = this.counters;
		return String.format("soak on %s: %d s with %d threads over %d slots, drained in %d ms%n"
				+ "  deliveries %d: claims %d (takeovers %d, engine %d), crashed claims %d, in-progress conflicts %d, "
				+ "rollbacks %d, releases %d, permanent failures %d, duplicates %d, failures replayed %d%n"
				+ "  cleanup: %d passes deleted %d records, %d errors; scratch conflicts %d; slow runs %d, "
				+ "renewals %d, leases lost %d; store steps failed %s%n  unexpected exceptions %s %s",
				getClass().getSimpleName(), soaked.toSeconds(),
				THREADS, SLOTS, drained.toMillis(), c.deliveries.sum(), c.claims.sum(), c.takeovers.sum(),
				c.engineTakeovers.sum(), c.crashes.sum(), c.conflicts.sum(), c.rollbacks.sum(), c.releases.sum(),
				c.permanentFailures.sum(), c.duplicates.sum(), c.failureReplays.sum(), c.cleanups.sum(), c.deleted.sum(),
				c.cleanupErrors.sum(), c.scratchConflicts.sum(), c.slowRuns.sum(), c.renewals.sum(), c.leasesLost.sum(),
				c.storeFailures,
				c.unexpected, c.messages);
	}

	/**
	 * How a delivery of a counted key goes, with its weight.
	 */
	enum Delivery {

		/** In a transaction that commits the effect and the record together. */
		COMMIT(true, 30),

		/** In a transaction that rolls back after the completion: a crash before the commit. */
		ROLLBACK(true, 12),

		/** In a transaction: the effect is written, then a retryable exception rolls it back. */
		RETRYABLE_IN_TRANSACTION(true, 12),

		/** In a transaction: the effect is written, then a permanent failure rolls it back. */
		PERMANENT_IN_TRANSACTION(true, 3),

		/** A claim without a transaction, with a short lease, never finished. */
		CRASH(false, 13),

		/** Without a transaction: the effect commits at once, then the completion. */
		LEASED(false, 18),

		/**
		 * As {@link #LEASED}, with a short lease that the run outlives, renewed (at most
		 * {@value JdbcSoakTests#MOST_SLOW_RUNS} at once; else as {@link #LEASED}).
		 */
		SLOW_LEASED(false, 2),

		/** Without a transaction: a retryable failure before the effect; the claim is released. */
		RETRYABLE_LEASED(false, 7),

		/** Without a transaction: a permanent failure before the effect; the failure is stored. */
		PERMANENT_LEASED(false, 3);

		private static final Delivery[] WEIGHTED = weighted();

		final boolean inTransaction;

		private final int weight;

		Delivery(boolean inTransaction, int weight) {
			this.inTransaction = inTransaction;
			this.weight = weight;
		}

		static Delivery pick(ThreadLocalRandom random) {
			return WEIGHTED[random.nextInt(WEIGHTED.length)];
		}

		private static Delivery[] weighted() {
			List<Delivery> weighted = new ArrayList<>();
			for (Delivery delivery : values()) {
				for (int i = 0; i < delivery.weight; i++) {
					weighted.add(delivery);
				}
			}
			return weighted.toArray(new Delivery[0]);
		}

	}

	/**
	 * What happened, counted by the deliveries and by the engine.
	 */
	static final class Counters implements IdempotencyObserver {

		final LongAdder deliveries = new LongAdder();

		final LongAdder claims = new LongAdder();

		final LongAdder takeovers = new LongAdder();

		final LongAdder engineTakeovers = new LongAdder();

		final LongAdder crashes = new LongAdder();

		final LongAdder conflicts = new LongAdder();

		final LongAdder rollbacks = new LongAdder();

		final LongAdder releases = new LongAdder();

		final LongAdder permanentFailures = new LongAdder();

		final LongAdder duplicates = new LongAdder();

		final LongAdder failureReplays = new LongAdder();

		final LongAdder cleanups = new LongAdder();

		final LongAdder deleted = new LongAdder();

		final LongAdder cleanupErrors = new LongAdder();

		final LongAdder scratchConflicts = new LongAdder();

		final LongAdder leasesLost = new LongAdder();

		final LongAdder renewals = new LongAdder();

		final LongAdder slowRuns = new LongAdder();

		final Map<StoreOperation, LongAdder> storeFailures = new ConcurrentHashMap<>();

		final Map<String, LongAdder> unexpected = new ConcurrentHashMap<>();

		/** The first message of each unexpected exception's root cause. */
		final Map<String, String> messages = new ConcurrentHashMap<>();

		void unexpected(RuntimeException ex) {
			String type = ex.getClass().getSimpleName();
			Throwable root = ex;
			for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause()) {
				type += " < " + cause.getClass().getSimpleName();
				root = cause;
			}
			this.unexpected.computeIfAbsent(type, (t) -> new LongAdder()).increment();
			this.messages.putIfAbsent(type, String.valueOf(root.getMessage()));
		}

		@Override
		public void onTakeover(String workflow) {
			this.engineTakeovers.increment();
		}

		@Override
		public void onLeaseLost(String workflow) {
			this.leasesLost.increment();
		}

		@Override
		public void onStoreCall(StoreOperation operation, long nanos, boolean success) {
			if (!success) {
				this.storeFailures.computeIfAbsent(operation, (o) -> new LongAdder()).increment();
			}
			else if (operation == StoreOperation.RENEW) {
				this.renewals.increment();
			}
		}

	}

	/** A record as the table holds it. */
	private record Row(String status, @Nullable String response, long expiresAt) {
	}

	/** The effects of one key: how many, and the run of one of them. */
	private record Effect(long count, @Nullable String runId) {
	}

	/** When a record kept briefly may be deleted. */
	private record Expiry(Instant at) implements Delayed {

		@Override
		public long getDelay(TimeUnit unit) {
			return unit.convert(this.at.toEpochMilli() - System.currentTimeMillis(), TimeUnit.MILLISECONDS);
		}

		@Override
		public int compareTo(Delayed other) {
			return Long.compare(getDelay(TimeUnit.MILLISECONDS), other.getDelay(TimeUnit.MILLISECONDS));
		}

	}

	/** A failure the next delivery retries. */
	static final class RetryableFailure extends RuntimeException {

		RetryableFailure(String runId) {
			super(runId);
		}

	}

	/** A failure that is stored and replayed. */
	static final class PermanentFailure extends RuntimeException {

		PermanentFailure(String runId) {
			super(runId);
		}

	}

}
