package io.github.idempotency.store.hybrid;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testfixtures.CountingIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatRuntimeException;
import static org.awaitility.Awaitility.await;

/**
 * What the cache of the hybrid store saves, and that a Redis outage costs only speed.
 * Each test runs its own redis-server; the source of truth is counted.
 */
@ExtendWith(OutputCaptureExtension.class)
class HybridIdempotencyStoreCacheTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private final MutableClock clock = new MutableClock(java.time.Instant.now());

	private final CountingIdempotencyStore sourceOfTruth = new CountingIdempotencyStore(
			HybridIdempotencyStoreTest.sourceOfTruth(this.clock));

	private final RedisServerProcess server = new RedisServerProcess().start();

	private final LettuceConnectionFactory connectionFactory = RedisConnections.standalone(this.server.url());

	private final HybridIdempotencyStore store = new HybridIdempotencyStore(this.sourceOfTruth,
			this.connectionFactory, "hybrid", RETENTION, this.clock);

	private final String workflow = "hybrid-" + UUID.randomUUID();

	@AfterEach
	void stop() {
		this.connectionFactory.destroy();
		this.server.close();
	}

	@Test
	void aDuplicateOfAFinishedKeyTouchesNoDatabase() {
		finish("k1", "\"receipt\"");
		this.sourceOfTruth.reset();
		ClaimResult duplicate = claim("k1", "owner-2", null);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isEqualTo("\"receipt\"");
		assertThat(this.sourceOfTruth.totalCalls()).isZero();
	}

	@Test
	void aReplayedFailureAndAMismatchTouchNoDatabase() {
		claim("k1", "owner-1", "fp-1").acquiredHandle().fail(new IllegalArgumentException("declined"));
		this.sourceOfTruth.reset();
		assertThat(claim("k1", "owner-2", "fp-1").outcome()).isEqualTo(ClaimOutcome.FAILED);
		ClaimResult mismatch = claim("k1", "owner-3", "fp-2");
		assertThat(mismatch.outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(mismatch.record().fingerprint()).isEqualTo("fp-1");
		assertThat(this.sourceOfTruth.totalCalls()).isZero();
	}

	@Test
	void aFinishedRecordFoundInTheDatabaseIsCachedForTheNextClaim() {
		this.sourceOfTruth.claim(request("k1", "elsewhere", null)).acquiredHandle().complete("1");
		this.sourceOfTruth.reset();
		assertThat(claim("k1", "owner-1", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(this.sourceOfTruth.calls("claim")).isOne();
		this.sourceOfTruth.reset();
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(this.sourceOfTruth.totalCalls()).isZero();
	}

	@Test
	void aCachedRecordExpiresWithItsRetention() {
		finish("k1", "1");
		// the database keeps a record finished within its lease until its lease's end + retention
		Duration kept = Duration.between(this.clock.instant(), this.store.find(id("k1")).orElseThrow().expiresAt());
		assertThat(kept).isGreaterThanOrEqualTo(RETENTION);
		this.clock.advance(kept.plusSeconds(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@Test
	void deleteEvictsTheCachedRecord() {
		finish("k1", "1");
		assertThat(this.store.delete(id("k1"))).isTrue();
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@Test
	void whileRedisIsDownEveryAnswerComesRightFromTheDatabase(CapturedOutput output) {
		finish("k1", "\"cached\"");
		this.server.stop();
		ClaimResult duplicate = claim("k1", "owner-2", null);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isEqualTo("\"cached\"");
		ClaimResult k2 = claim("k2", "owner-3", "fp-1");
		assertThat(k2.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(claim("k2", "owner-4", "fp-1").outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(k2.acquiredHandle().complete("2")).isTrue();
		assertThat(claim("k2", "owner-5", "fp-2").outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(claim("k2", "owner-5", "fp-1").outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(this.store.cacheErrors()).isPositive();
		assertThat(output.toString().split("cannot be reached", -1)).hasSize(2);
	}

	@Test
	void aDeleteWhileRedisIsDownFailsAndLeavesTheRecord() {
		finish("k1", "1");
		this.server.stop();
		assertThatRuntimeException().isThrownBy(() -> this.store.delete(id("k1")));
		assertThat(this.sourceOfTruth.find(id("k1"))).isPresent();
	}

	@Test
	void whenRedisReturnsTheCacheIsUsedAgain(CapturedOutput output) {
		finish("k1", "1");
		this.server.stop();
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		this.server.start();
		await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(() -> {
			claim("k1", "owner-3", null);
			this.sourceOfTruth.reset();
			return claim("k1", "owner-4", null).outcome() == ClaimOutcome.DUPLICATE
					&& this.sourceOfTruth.totalCalls() == 0;
		});
		assertThat(output).contains("answers again");
	}

	private void finish(String key, String response) {
		assertThat(claim(key, "owner-1", null).acquiredHandle().complete(response)).isTrue();
	}

	private ClaimResult claim(String key, String owner, @Nullable String fingerprint) {
		return this.store.claim(request(key, owner, fingerprint));
	}

	private ClaimRequest request(String key, String owner, @Nullable String fingerprint) {
		return new ClaimRequest(id(key), owner, fingerprint, LEASE, RETENTION);
	}

	private RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

}
