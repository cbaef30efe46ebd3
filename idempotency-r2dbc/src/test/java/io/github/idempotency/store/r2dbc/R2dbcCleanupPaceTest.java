package io.github.idempotency.store.r2dbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.r2dbc.spi.ConnectionFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.test.MutableClock;
import org.springframework.r2dbc.core.DatabaseClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The pace of the r2dbc store's cleanup, on PostgreSQL and on MariaDB, on a table of its
 * own: each batch timed on a monotonic time and the pause after it waited out on a
 * {@link Scheduler}, both driven by the test (each batch takes 2 ms; the scheduler's wall
 * clock jumps an hour at each reading), as the jdbc store's cleanup is; and a run cancelled
 * during a pause deletes no more.
 */
class R2dbcCleanupPaceTest {

	private static final String TABLE = "idempotency_r2dbc_cleanup_test";

	private final MutableClock clock = new MutableClock(Instant.parse("2032-01-01T00:00:00Z"));

	/**
	 * Each batch takes 2 ms: at a duty cycle of a quarter, a pause of 6 ms after each; at
	 * 1,000 rows a second, 10 rows take 10 ms: 8 of pause, where the duty cycle of a half
	 * asks 2.
	 */
	static Stream<Arguments> paces() {
		return Stream.of("postgresql", "mariadb")
			.flatMap((database) -> Stream.of(
					Arguments.of(database, 25, new CleanupPace(10, 0.25, 0), List.of(6, 6)),
					Arguments.of(database, 30, new CleanupPace(10, 0.5, 1000), List.of(8, 8, 8))));
	}

	@ParameterizedTest
	@MethodSource("paces")
	void theCleanupPausesAfterEachFullBatchAsItsPaceSaysAndFinishes(String database, int rows, CleanupPace pace,
			List<Integer> pausesInMillis) {
		ManualCleanupTime time = new ManualCleanupTime();
		R2dbcIdempotencyStore store = store(database, time);
		expired(store, rows);
		assertThat(store.deleteExpired(pace).block()).isEqualTo(rows);
		assertThat(time.pauses).containsExactlyElementsOf(pausesInMillis.stream().map(Duration::ofMillis).toList());
		assertThat(rows(database)).isZero();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aRunCancelledDuringAPauseDeletesNoMore(String database) {
		ManualCleanupTime time = new ManualCleanupTime();
		time.pausesEndless = true;
		R2dbcIdempotencyStore store = store(database, time);
		expired(store, 25);
		Disposable run = store.deleteExpired(new CleanupPace(10, 0.5, 0)).subscribe();
		await().atMost(Duration.ofSeconds(30)).until(() -> time.pending != null);
		run.dispose();
		assertThat(time.pending.isDisposed()).isTrue();
		assertThat(rows(database)).isEqualTo(15);
	}

	private R2dbcIdempotencyStore store(String database, ManualCleanupTime time) {
		ConnectionFactory connectionFactory = connectionFactory(database);
		R2dbcTestDatabases.createTable(connectionFactory, database.equals("postgresql") ? "postgresql" : "mysql",
				TABLE);
		return new R2dbcIdempotencyStore(connectionFactory, TABLE, Duration.ofSeconds(5), this.clock, time::nanoTime,
				time);
	}

	private static ConnectionFactory connectionFactory(String database) {
		return database.equals("postgresql") ? R2dbcTestDatabases.postgres() : R2dbcTestDatabases.mariaDb();
	}

	/** Records finished one second apart, kept one minute, then expired by a day. */
	private void expired(R2dbcIdempotencyStore store, int count) {
		for (int i = 0; i < count; i++) {
			RecordId id = new RecordId("cleanup", String.format("expired-%04d", i));
			store.claim(new ClaimRequest(id, "owner", null, Duration.ofSeconds(30), Duration.ofMinutes(1)))
				.flatMap((claim) -> {
					assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
					return claim.acquiredHandle().complete("1");
				})
				.block();
			this.clock.advance(Duration.ofSeconds(1));
		}
		this.clock.advance(Duration.ofDays(1));
	}

	private static long rows(String database) {
		return Flux.from(DatabaseClient.create(connectionFactory(database))
			.sql("SELECT COUNT(*) FROM " + TABLE)
			.map((row) -> row.get(0, Number.class))
			.one()).blockFirst().longValue();
	}

	/**
	 * A monotonic time that moves by 2 ms each time it is read, and by each pause, which
	 * runs at once (or never, when {@code pausesEndless}): a batch between two readings
	 * takes 2 ms. Its wall clock, the scheduler's {@code now}, jumps an hour ahead each time
	 * it is read: the pauses must not follow it.
	 */
	static final class ManualCleanupTime implements Scheduler {

		private static final long STEP = TimeUnit.MILLISECONDS.toNanos(2);

		final List<Duration> pauses = new CopyOnWriteArrayList<>();

		volatile boolean pausesEndless;

		volatile @Nullable Disposable pending;

		private long nanoTime;

		private long wallClock;

		synchronized long nanoTime() {
			this.nanoTime += STEP;
			return this.nanoTime;
		}

		@Override
		public synchronized long now(TimeUnit unit) {
			this.wallClock += TimeUnit.HOURS.toNanos(1);
			return unit.convert(this.wallClock, TimeUnit.NANOSECONDS);
		}

		@Override
		public Disposable schedule(Runnable task) {
			task.run();
			return Disposables.disposed();
		}

		@Override
		public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
			this.pauses.add(Duration.ofNanos(unit.toNanos(delay)));
			if (this.pausesEndless) {
				Disposable pending = Disposables.single();
				this.pending = pending;
				return pending;
			}
			synchronized (this) {
				this.nanoTime += unit.toNanos(delay);
			}
			task.run();
			return Disposables.disposed();
		}

		@Override
		public Worker createWorker() {
			return Schedulers.immediate().createWorker();
		}

	}

}
