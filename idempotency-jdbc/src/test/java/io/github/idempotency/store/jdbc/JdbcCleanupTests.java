package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The jdbc store's cleanup on a table of its own: several instances at once (one holding
 * its batch's rows while another runs, forced with a transaction the test holds; two
 * running together), the oldest records first, and the pace it keeps between batches,
 * measured and slept on a {@link CleanupTime} the test drives. Each database is a small
 * subclass.
 */
abstract class JdbcCleanupTests {

	static final String TABLE = "idempotency_cleanup_test";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final MutableClock clock = new MutableClock(Instant.parse("2032-01-01T00:00:00Z"));

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final DataSource dataSource;

	private final String platform;

	private final JdbcIdempotencyStore store;

	JdbcCleanupTests(DataSource dataSource, String platform) {
		this.dataSource = dataSource;
		this.platform = platform;
		TestDatabases.createTable(dataSource, platform, TABLE);
		this.store = store(CleanupTime.SYSTEM);
	}

	@AfterEach
	void stop() {
		this.executor.shutdownNow();
	}

	@Test
	void aCleanerSkipsTheRowsAnotherOneHoldsWithoutWaitingAndNeitherDeletesARowTwice() throws Exception {
		List<String> keys = expired(30);
		try (Connection other = this.dataSource.getConnection()) {
			// another instance's batch in flight: the 10 oldest expired rows locked, not yet deleted
			other.setAutoCommit(false);
			List<String> held = lockOldest(other, 10);
			assertThat(held).containsExactlyElementsOf(keys.subList(0, 10));
			// a cleaner that waited for them would end in the lock timeout and fail
			Future<Integer> running = this.executor.submit(() -> this.store.deleteExpired(CleanupPace.unpaced(7)));
			assertThat(running.get(30, TimeUnit.SECONDS)).isEqualTo(20);
			assertThat(rows()).containsExactlyElementsOf(held);
			try (PreparedStatement delete = other.prepareStatement(
					"DELETE FROM " + TABLE + " WHERE idempotency_key IN (" + "?, ".repeat(9) + "?)")) {
				for (int i = 0; i < held.size(); i++) {
					delete.setString(i + 1, held.get(i));
				}
				assertThat(delete.executeUpdate()).isEqualTo(10);
			}
			other.commit();
		}
		assertThat(this.store.deleteExpired(CleanupPace.unpaced(7))).isZero();
		assertThat(rows()).isEmpty();
	}

	@Test
	void twoCleanersRunningTogetherDeleteEachExpiredRowOnceAndKeepTheOthers() throws Exception {
		expired(300);
		List<String> live = live(5);
		JdbcIdempotencyStore other = store(CleanupTime.SYSTEM);
		CountDownLatch start = new CountDownLatch(1);
		Future<Integer> first = this.executor.submit(() -> {
			start.await();
			return this.store.deleteExpired(CleanupPace.unpaced(10));
		});
		Future<Integer> second = this.executor.submit(() -> {
			start.await();
			return other.deleteExpired(CleanupPace.unpaced(10));
		});
		start.countDown();
		assertThat(first.get(60, TimeUnit.SECONDS) + second.get(60, TimeUnit.SECONDS)).isEqualTo(300);
		assertThat(rows()).containsExactlyInAnyOrderElementsOf(live);
	}

	@Test
	void theCleanupPausesAfterEachFullBatchByItsDutyCycleAndFinishes() {
		expired(25);
		ManualCleanupTime time = new ManualCleanupTime(Duration.ofMillis(2));
		assertThat(store(time).deleteExpired(new CleanupPace(10, 0.25, 0))).isEqualTo(25);
		// each batch took 2 ms: a quarter of the time working, three quarters pausing
		assertThat(time.sleeps).containsExactly(Duration.ofMillis(6), Duration.ofMillis(6));
		assertThat(rows()).isEmpty();
	}

	@Test
	void theCleanupPausesLongerWhenItsRowsPerSecondSaySo() {
		expired(30);
		ManualCleanupTime time = new ManualCleanupTime(Duration.ofMillis(2));
		// 10 rows at 1,000 a second take 10 ms: 2 ms of work, 8 of pause; the duty cycle asks 2
		assertThat(store(time).deleteExpired(new CleanupPace(10, 0.5, 1000))).isEqualTo(30);
		assertThat(time.sleeps).containsExactly(Duration.ofMillis(8), Duration.ofMillis(8), Duration.ofMillis(8));
		assertThat(rows()).isEmpty();
	}

	@Test
	void anInterruptDuringAPauseEndsTheRunWithTheOldestRecordsDeleted() {
		List<String> keys = expired(25);
		ManualCleanupTime time = new ManualCleanupTime(Duration.ofMillis(2));
		time.interrupt = true;
		try {
			assertThat(store(time).deleteExpired(new CleanupPace(10, 0.5, 0))).isEqualTo(10);
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(rows()).containsExactlyInAnyOrderElementsOf(keys.subList(10, 25));
	}

	private JdbcIdempotencyStore store(CleanupTime time) {
		return new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), this.clock, time);
	}

	/**
	 * Records finished one second apart, kept one minute, then expired by a day.
	 * @return their keys, oldest first
	 */
	private List<String> expired(int count) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String key = String.format("expired-%04d", i);
			claim(key, Duration.ofMinutes(1)).acquiredHandle().complete("1");
			keys.add(key);
			this.clock.advance(Duration.ofSeconds(1));
		}
		this.clock.advance(Duration.ofDays(1));
		return keys;
	}

	/** Records finished now and kept a week, and one still in progress. */
	private List<String> live(int count) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String key = "live-" + i;
			claim(key, Duration.ofDays(7)).acquiredHandle().complete("1");
			keys.add(key);
		}
		claim("running", Duration.ofMinutes(1));
		keys.add("running");
		return keys;
	}

	private ClaimResult claim(String key, Duration retention) {
		ClaimResult claim = this.store
			.claim(new ClaimRequest(new RecordId("cleanup", key), "owner", null, LEASE, retention));
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		return claim;
	}

	private List<String> lockOldest(Connection connection, int count) throws Exception {
		List<String> keys = new ArrayList<>();
		try (PreparedStatement select = connection.prepareStatement("SELECT idempotency_key FROM " + TABLE
				+ " WHERE expires_at <= ? ORDER BY expires_at LIMIT " + count + " FOR UPDATE")) {
			select.setLong(1, this.clock.instant().toEpochMilli());
			try (ResultSet result = select.executeQuery()) {
				while (result.next()) {
					keys.add(result.getString(1));
				}
			}
		}
		return keys;
	}

	private List<String> rows() {
		String key = this.platform.equals("mysql") ? "CAST(idempotency_key AS CHAR)" : "idempotency_key";
		return JdbcClient.create(this.dataSource)
			.sql("SELECT " + key + " FROM " + TABLE + " ORDER BY expires_at, idempotency_key")
			.query(String.class)
			.list();
	}

	/**
	 * Time that moves by {@code step} each time it is read, and by each pause: a batch
	 * between two readings takes {@code step}.
	 */
	static final class ManualCleanupTime implements CleanupTime {

		final List<Duration> sleeps = new CopyOnWriteArrayList<>();

		private final long step;

		private long now;

		boolean interrupt;

		ManualCleanupTime(Duration step) {
			this.step = step.toNanos();
		}

		@Override
		public long nanoTime() {
			this.now += this.step;
			return this.now;
		}

		@Override
		public void sleep(long nanos) throws InterruptedException {
			this.sleeps.add(Duration.ofNanos(nanos));
			if (this.interrupt) {
				throw new InterruptedException();
			}
			this.now += nanos;
		}

	}

}
