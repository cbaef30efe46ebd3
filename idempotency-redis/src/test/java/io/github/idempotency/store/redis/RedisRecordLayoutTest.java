package io.github.idempotency.store.redis;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import io.github.idempotency.testservers.TestServers;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The compact record (layout 1) on a real Redis: a rolling upgrade from the hashes of
 * layout 0 (written here by layout 0's own scripts), the memory of a finished record, and
 * the commands a claim costs.
 */
class RedisRecordLayoutTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	/** Generous for the real time a few round trips take on a slow machine. */
	private static final long SLACK_MILLIS = 5_000;

	/** A SHA-256 fingerprint as the engine makes it: 64 lower-case hexadecimal digits. */
	private static final String FINGERPRINT = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

	private static final String OTHER_FINGERPRINT = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";

	private static LettuceConnectionFactory connectionFactory;

	private final MutableClock clock = new MutableClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));

	private final String workflow = "layout-" + UUID.randomUUID();

	private final RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory, "layout-test", this.clock);

	private final StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);

	private final Layout0 layout0 = new Layout0(this.redis);

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void aFinishedRecordOfLayout0IsADuplicateIsFoundAndStaysAsItIs() {
		String key = key("done");
		Instant claimedAt = this.clock.instant();
		assertThat(this.layout0.claim(key, now(), "old-owner", FINGERPRINT, LEASE, RETENTION)).isEqualTo("ACQUIRED");
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.layout0.finish(key, now(), "old-owner", RETENTION, "COMPLETED", "{\"amount\":42}")).isTrue();
		ClaimResult duplicate = claim("done", "new-owner", FINGERPRINT);
		assertThat(duplicate.outcome()).as("the same fingerprint in both layouts").isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isEqualTo("{\"amount\":42}");
		IdempotencyRecord found = this.store.find(id("done")).orElseThrow();
		assertThat(found.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(found.owner()).isEqualTo("old-owner");
		assertThat(found.fingerprint()).isEqualTo(FINGERPRINT);
		assertThat(found.attempt()).isEqualTo(1);
		assertThat(found.response()).isEqualTo("{\"amount\":42}");
		assertThat(found.createdAt()).isEqualTo(claimedAt);
		assertThat(found.updatedAt()).isEqualTo(this.clock.instant());
		assertThat(found.expiresAt()).isEqualTo(this.clock.instant().plus(RETENTION));
		assertThat(this.redis.type(key)).as("a claim that only reads leaves the record as it is")
			.isEqualTo(DataType.HASH);
	}

	@Test
	void aFailedRecordOfLayout0ReplaysItsError() {
		String key = key("failed");
		this.layout0.claim(key, now(), "old-owner", "", LEASE, RETENTION);
		assertThat(this.layout0.finish(key, now(), "old-owner", RETENTION, "FAILED", "java.lang.IllegalStateException",
				"out of stock"))
			.isTrue();
		ClaimResult failed = claim("failed", "new-owner", null);
		assertThat(failed.outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(failed.record().errorType()).isEqualTo("java.lang.IllegalStateException");
		assertThat(failed.record().errorMessage()).isEqualTo("out of stock");
	}

	@Test
	void aRecordOfLayout0WithAnotherFingerprintIsAMismatch() {
		String key = key("mismatch");
		this.layout0.claim(key, now(), "old-owner", FINGERPRINT, LEASE, RETENTION);
		this.layout0.finish(key, now(), "old-owner", RETENTION, "COMPLETED", "1");
		ClaimResult mismatch = claim("mismatch", "new-owner", OTHER_FINGERPRINT);
		assertThat(mismatch.outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(mismatch.record().fingerprint()).isEqualTo(FINGERPRINT);
	}

	@Test
	void aLiveClaimOfLayout0IsInProgressWithItsOwnerAndIsNotTouched() {
		String key = key("running");
		this.layout0.claim(key, now(), "old-owner", FINGERPRINT, LEASE, RETENTION);
		this.clock.advance(LEASE.minusMillis(1));
		ClaimResult running = claim("running", "new-owner", FINGERPRINT);
		assertThat(running.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(running.record().owner()).isEqualTo("old-owner");
		assertThat(this.redis.type(key)).isEqualTo(DataType.HASH);
		assertThat(this.layout0.finish(key, now(), "old-owner", RETENTION, "COMPLETED", "1"))
			.as("the node of layout 0 that holds it still completes it").isTrue();
		assertThat(claim("running", "new-owner", FINGERPRINT).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
	}

	@Test
	void anExpiredLeaseOfLayout0IsTakenOverWithTheNextAttemptAndItsRecoveryPoint() {
		String key = key("crashed");
		Instant claimedAt = this.clock.instant();
		this.layout0.claim(key, now(), "old-owner", FINGERPRINT, LEASE, RETENTION);
		assertThat(this.layout0.saveRecoveryPoint(key, now(), "old-owner", LEASE, RETENTION, "stock-reserved"))
			.isTrue();
		this.clock.advance(LEASE);
		ClaimResult takeover = claim("crashed", "new-owner", FINGERPRINT);
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().owner()).isEqualTo("new-owner");
		assertThat(takeover.record().recoveryPoint()).isEqualTo("stock-reserved");
		assertThat(takeover.record().fingerprint()).isEqualTo(FINGERPRINT);
		assertThat(takeover.record().createdAt()).isEqualTo(claimedAt);
		assertThat(this.store.find(id("crashed"))).contains(takeover.record());
		assertThat(this.redis.type(key)).as("migrated by the takeover").isEqualTo(DataType.STRING);
		assertThatExceptionOfType(DataAccessException.class)
			.as("the crashed run's node of layout 0 cannot complete it: it fails, it does not overwrite")
			.isThrownBy(() -> this.layout0.finish(key, now(), "old-owner", RETENTION, "COMPLETED", "stale"));
		assertThat(takeover.acquiredHandle().complete("\"done\"")).isTrue();
		ClaimResult duplicate = claim("crashed", "third-owner", FINGERPRINT);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isEqualTo("\"done\"");
		assertThat(duplicate.record().attempt()).isEqualTo(2);
	}

	@Test
	void aRecordOfLayout0PastItsRetentionIsReplacedByANewClaim() {
		String key = key("old");
		this.layout0.claim(key, now(), "old-owner", FINGERPRINT, LEASE, RETENTION);
		this.layout0.finish(key, now(), "old-owner", RETENTION, "COMPLETED", "1");
		this.clock.advance(RETENTION);
		ClaimResult fresh = claim("old", "new-owner", OTHER_FINGERPRINT);
		assertThat(fresh.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(fresh.record().attempt()).isEqualTo(1);
		assertThat(this.store.find(id("old"))).contains(fresh.record());
	}

	@ParameterizedTest(name = "reading first: {0}")
	@ValueSource(booleans = { false, true })
	void aBatchAnswersRecordsOfLayout0AndTakesOverAnExpiredOneInTheCompactLayout(boolean readingFirst) {
		if (readingFirst) {
			// the read finds no string at a hash: SET NX GET answers WRONGTYPE, the script reads it
			ReadingFirst.after(this.store, this.workflow);
		}
		this.layout0.claim(key("done"), now(), "old-done", FINGERPRINT, LEASE, RETENTION);
		this.layout0.finish(key("done"), now(), "old-done", RETENTION, "COMPLETED", "\"old\"");
		this.layout0.claim(key("crashed"), now(), "old-crashed", FINGERPRINT, LEASE, RETENTION);
		this.layout0.saveRecoveryPoint(key("crashed"), now(), "old-crashed", LEASE, RETENTION, "half-way");
		this.clock.advance(LEASE.plusSeconds(1));
		this.layout0.claim(key("running"), now(), "old-running", FINGERPRINT, LEASE, RETENTION);
		List<ClaimResult> batch = this.store.claimAll(List.of(
				new ClaimRequest(id("new"), "batch-new", FINGERPRINT, LEASE, RETENTION),
				new ClaimRequest(id("done"), "batch-done", FINGERPRINT, LEASE, RETENTION),
				new ClaimRequest(id("crashed"), "batch-crashed", FINGERPRINT, LEASE, RETENTION),
				new ClaimRequest(id("running"), "batch-running", FINGERPRINT, LEASE, RETENTION)));
		assertThat(batch).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED,
					ClaimOutcome.IN_PROGRESS);
		assertThat(batch.get(1).record().response()).isEqualTo("\"old\"");
		assertThat(batch.get(2).record().attempt()).isEqualTo(2);
		assertThat(batch.get(2).record().recoveryPoint()).isEqualTo("half-way");
		assertThat(batch.get(3).record().owner()).isEqualTo("old-running");
		assertThat(this.redis.type(key("done"))).isEqualTo(DataType.HASH);
		assertThat(this.redis.type(key("running"))).isEqualTo(DataType.HASH);
		assertThat(this.redis.type(key("crashed"))).as("migrated by the takeover").isEqualTo(DataType.STRING);
		assertThat(this.store.completeAll(List.of(batch.get(0).acquiredHandle(), batch.get(2).acquiredHandle()),
				List.of("\"new\"", "\"crashed\"")))
			.containsExactly(true, true);
		IdempotencyRecord crashed = this.store.find(id("crashed")).orElseThrow();
		assertThat(crashed.response()).isEqualTo("\"crashed\"");
		assertThat(crashed.recoveryPoint()).isEqualTo("half-way");
		assertThat(this.layout0.finish(key("running"), now(), "old-running", RETENTION, "COMPLETED", "1"))
			.as("the node of layout 0 that holds it still completes it").isTrue();
	}

	@Test
	void aClaimFinishesRenewsAndReleasesItsRecordInEitherLayout() {
		// an owner of the engine's shape: the scripts must make the same token of it as Java
		String owner = UUID.randomUUID() + "-" + 4711;
		ClaimHandle completing = claimInLayout0("complete", owner);
		assertThat(completing.complete("\"done\"")).isTrue();
		IdempotencyRecord completed = this.store.find(id("complete")).orElseThrow();
		assertThat(completed.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(completed.owner()).isEqualTo(owner);
		assertThat(completed.fingerprint()).isEqualTo(FINGERPRINT);
		assertThat(completed.response()).isEqualTo("\"done\"");
		assertThat(this.redis.type(key("complete"))).isEqualTo(DataType.STRING);

		ClaimHandle renewing = claimInLayout0("renew", owner);
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(renewing.saveRecoveryPoint("half-way")).isTrue();
		IdempotencyRecord renewed = this.store.find(id("renew")).orElseThrow();
		assertThat(renewed.recoveryPoint()).isEqualTo("half-way");
		assertThat(renewed.leaseUntil()).isEqualTo(this.clock.instant().plus(LEASE));

		ClaimHandle releasing = claimInLayout0("release", owner);
		assertThat(releasing.release(new IllegalStateException())).isTrue();
		assertThat(this.store.find(id("release"))).isEmpty();

		ClaimHandle stale = claimInLayout0("stale", "someone-else");
		this.redis.delete(key("stale"));
		this.layout0.claim(key("stale"), now(), owner, FINGERPRINT, LEASE, RETENTION);
		assertThat(stale.complete("\"late\"")).as("fenced by owner in layout 0 too").isFalse();
		assertThat(stale.renew()).isFalse();
		assertThat(this.store.find(id("stale")).orElseThrow().owner()).isEqualTo(owner);
	}

	@Test
	void aFinishedRecordTakesAtMostTwiceItsKeyAndResultInMemory() {
		// an owner and a fingerprint as the engine makes them, a run of 17 minutes, a day's retention
		String owner = UUID.randomUUID() + "-" + 123_456;
		String response = "\"" + "r".repeat(78) + "\"";
		Duration run = Duration.ofMinutes(17);
		Duration retention = Duration.ofDays(1);
		String workflow = "orders";
		String prefix = "layout-test:{" + workflow.length() + ":" + workflow + ":";
		RecordId id = new RecordId(workflow, UUID.randomUUID() + "k".repeat(60 - prefix.length() - 1 - 36));
		String key = this.store.key(id);
		assertThat(key).hasSize(60);
		ClaimHandle handle = this.store.claim(new ClaimRequest(id, owner, FINGERPRINT, LEASE, retention))
			.acquiredHandle();
		this.clock.advance(run);
		assertThat(handle.renew()).isTrue();
		assertThat(handle.complete(response)).isTrue();
		long compact = memoryUsage(key);

		this.redis.delete(key);
		this.layout0.claim(key, now(), owner, FINGERPRINT, LEASE, retention);
		this.clock.advance(run);
		this.layout0.finish(key, now(), owner, retention, "COMPLETED", response);
		long hash = memoryUsage(key);
		this.redis.delete(key);
		System.out.println("MEMORY USAGE of a finished record, 60-byte Redis key, 80-byte response: layout 0 (hash) "
				+ hash + " bytes, layout 1 (compact) " + compact + " bytes");
		assertThat(compact).isLessThanOrEqualTo(2 * (60 + 80));
		assertThat(hash).isGreaterThan(3 * compact);
	}

	@Test
	void aFinishedRecordLivesInRedisForItsRetentionAndCountsAsAbsentAfterIt() {
		Duration retention = Duration.ofMinutes(10);
		ClaimHandle handle = this.store.claim(new ClaimRequest(id("ttl"), "owner-1", null, LEASE, retention))
			.acquiredHandle();
		assertThat(this.redis.getExpire(key("ttl"), TimeUnit.MILLISECONDS)).as("lease + retention while running")
			.isBetween(LEASE.plus(retention).toMillis() - SLACK_MILLIS, LEASE.plus(retention).toMillis());
		assertThat(handle.complete("1")).isTrue();
		assertThat(this.redis.getExpire(key("ttl"), TimeUnit.MILLISECONDS)).as("the retention once finished")
			.isBetween(retention.toMillis() - SLACK_MILLIS, retention.toMillis());
		this.clock.advance(retention.minusMillis(1));
		assertThat(this.store.claim(new ClaimRequest(id("ttl"), "owner-2", null, LEASE, retention)).outcome())
			.isEqualTo(ClaimOutcome.DUPLICATE);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(this.store.find(id("ttl"))).isEmpty();
		ClaimResult fresh = this.store.claim(new ClaimRequest(id("ttl"), "owner-3", null, LEASE, retention));
		assertThat(fresh.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(fresh.record().attempt()).isEqualTo(1);
	}

	@Test
	void aFirstClaimAndADuplicateAreOneSetCommandEachAndNoScript() {
		try (RedisServerProcess server = new RedisServerProcess().start()) {
			LettuceConnectionFactory factory = RedisConnections.standalone(server.url());
			RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port()));
			try (StatefulRedisConnection<String, String> stats = client.connect()) {
				RedisIdempotencyStore store = new RedisIdempotencyStore(factory, "calls", this.clock);
				RecordId id = id("k1");
				ClaimResult first = store.claim(new ClaimRequest(id, "owner-1", FINGERPRINT, LEASE, RETENTION));
				assertThat(first.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
				assertThat(calls(stats, "set")).isEqualTo(1);
				assertThat(calls(stats, "evalsha") + calls(stats, "eval")).isZero();
				assertThat(first.acquiredHandle().complete("\"done\"")).isTrue();
				long scripts = calls(stats, "evalsha") + calls(stats, "eval");
				long sets = calls(stats, "set");
				ClaimResult duplicate = store.claim(new ClaimRequest(id, "owner-2", FINGERPRINT, LEASE, RETENTION));
				assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
				assertThat(duplicate.record().response()).isEqualTo("\"done\"");
				assertThat(calls(stats, "set")).isEqualTo(sets + 1);
				assertThat(calls(stats, "evalsha") + calls(stats, "eval")).isEqualTo(scripts);
			}
			finally {
				client.shutdown();
				factory.destroy();
			}
		}
	}

	private ClaimHandle claimInLayout0(String key, String owner) {
		ClaimHandle handle = claim(key, owner, FINGERPRINT).acquiredHandle();
		// the same claim as a node of layout 0 would have written it
		this.redis.delete(key(key));
		assertThat(this.layout0.claim(key(key), now(), owner, FINGERPRINT, LEASE, RETENTION)).isEqualTo("ACQUIRED");
		assertThat(this.redis.type(key(key))).isEqualTo(DataType.HASH);
		return handle;
	}

	private static long calls(StatefulRedisConnection<String, String> stats, String command) {
		Matcher matcher = Pattern.compile("cmdstat_" + command + ":calls=(\\d+)")
			.matcher(stats.sync().info("commandstats"));
		return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
	}

	private static long memoryUsage(String key) {
		RedisClient client = RedisClient.create(TestServers.redisUrl());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().memoryUsage(key);
		}
		finally {
			client.shutdown();
		}
	}

	private ClaimResult claim(String key, String owner, String fingerprint) {
		return this.store.claim(new ClaimRequest(id(key), owner, fingerprint, LEASE, RETENTION));
	}

	private RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

	private String key(String key) {
		return this.store.key(id(key));
	}

	private long now() {
		return this.clock.millis();
	}

}
