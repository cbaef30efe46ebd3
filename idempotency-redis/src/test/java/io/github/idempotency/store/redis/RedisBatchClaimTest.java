package io.github.idempotency.store.redis;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The risks of a batch claimed by pipelined {@code SET NX GET} commands, with only the
 * keys that need a conditional write sent to the claim script afterwards, and of a
 * completion that writes the finished record when the record is still the value its
 * claim wrote.
 */
class RedisBatchClaimTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private static final RuntimeException RETRYABLE = new IllegalStateException("retry");

	private static LettuceConnectionFactory connectionFactory;

	private final MutableClock clock = new MutableClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));

	private final String workflow = "batch-" + UUID.randomUUID();

	private final ScriptWindows windows = new ScriptWindows(connectionFactory);

	private final RedisIdempotencyStore store = new RedisIdempotencyStore(this.windows.factory(), "batch-test",
			this.clock);

	private final StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void aSingleClaimThatTakesAnExpiredKeyOverBetweenTheBatchsReadAndItsScriptWins() {
		ClaimHandle crashed = claim("crashed", "crashed-owner").acquiredHandle();
		this.clock.advance(LEASE.plusSeconds(1));
		ClaimResult[] single = new ClaimResult[1];
		// the batch's SET NX GET saw the lease over; a single claim takes the key over before
		// the batch's script runs: the script decides again and finds the new live claim
		this.windows.before(RedisScripts.CLAIM, () -> single[0] = claim("crashed", "single-owner"));
		List<ClaimResult> batch = this.store.claimAll(List.of(request("new", "batch-new"),
				request("crashed", "batch-crashed")));
		assertThat(single[0].outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(batch).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(batch.get(1).record().owner()).isEqualTo("single-owner");
		assertThat(single[0].acquiredHandle().complete("\"single\"")).isTrue();
		assertThat(crashed.complete("\"late\"")).isFalse();
		assertThat(this.store.find(id("crashed")).orElseThrow().response()).isEqualTo("\"single\"");
	}

	@Test
	void aKeyClaimedAndCompletedBetweenABatchsReadAndItsClaimIsAnsweredNotClaimedAgain() {
		ReadingFirst.after(this.store, this.workflow);
		ClaimResult[] single = new ClaimResult[1];
		int[] windows = new int[1];
		// the batch's read found no record of "late"; another consumer claims and completes it
		// before the batch's SET NX GET, which must answer that record
		this.windows.between(RedisScripts.READ, RedisScripts.CLAIM_NEW, () -> {
			windows[0]++;
			single[0] = claim("late", "single-owner");
			assertThat(single[0].acquiredHandle().complete("\"single\"")).isTrue();
		});
		List<ClaimResult> batch = this.store.claimAll(List.of(request("new", "batch-new"), request("late", "batch-late")));
		assertThat(windows[0]).as("the batch read first").isEqualTo(1);
		assertThat(batch).extracting(ClaimResult::outcome).containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE);
		assertThat(batch.get(1).record().owner()).isEqualTo("single-owner");
		assertThat(batch.get(1).record().response()).isEqualTo("\"single\"");
		assertThat(this.store.find(id("late")).orElseThrow()).satisfies((stored) -> {
			assertThat(stored.status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(stored.response()).isEqualTo("\"single\"");
		});
		assertThat(batch.get(0).acquiredHandle().complete("\"new\"")).isTrue();
	}

	@Test
	void aBatchThatReadsFirstAnswersWhatItFoundAndTakesOverOnlyAnExpiredLease() {
		ClaimHandle done = claim("done", "done-owner").acquiredHandle();
		assertThat(done.complete("\"done\"")).isTrue();
		ClaimHandle crashed = claim("crashed", "crashed-owner").acquiredHandle();
		this.clock.advance(LEASE.plusSeconds(1));
		ClaimResult running = claim("running-now", "running-now-owner");
		ReadingFirst.after(this.store, this.workflow);
		int[] windows = new int[1];
		this.windows.between(RedisScripts.READ, RedisScripts.CLAIM_NEW, () -> windows[0]++);
		List<ClaimResult> batch = this.store.claimAll(List.of(request("done", "batch-done"),
				request("running-now", "batch-running"), request("crashed", "batch-crashed"),
				request("new", "batch-new")));
		assertThat(windows[0]).as("the batch read first").isEqualTo(1);
		assertThat(batch).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.DUPLICATE, ClaimOutcome.IN_PROGRESS, ClaimOutcome.ACQUIRED,
					ClaimOutcome.ACQUIRED);
		assertThat(batch.get(0).record().response()).isEqualTo("\"done\"");
		assertThat(batch.get(1).record().owner()).isEqualTo(running.record().owner());
		assertThat(batch.get(2).isTakeover()).isTrue();
		assertThat(batch.get(2).record().attempt()).isEqualTo(2);
		assertThat(batch.get(3).isTakeover()).isFalse();
		assertThat(crashed.complete("\"late\"")).isFalse();
		assertThat(this.store.completeAll(List.of(batch.get(2).acquiredHandle(), batch.get(3).acquiredHandle()),
				List.of("\"crashed\"", "\"new\"")))
			.containsExactly(true, true);
	}

	@Test
	void aSingleClaimOnAKeyTheBatchJustClaimedIsInProgress() {
		List<ClaimResult> batch = this.store.claimAll(List.of(request("a", "batch-a"), request("b", "batch-b")));
		assertThat(batch).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		ClaimResult single = claim("b", "single-owner");
		assertThat(single.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(single.record().owner()).isEqualTo("batch-b");
	}

	@Test
	void aBatchWithAKeyNamedTwiceWhoseLeaseRanOutTakesItOverOnce() {
		claim("crashed", "crashed-owner");
		this.clock.advance(LEASE.plusSeconds(1));
		List<ClaimResult> batch = this.store.claimAll(List.of(request("crashed", "first"), request("new", "new"),
				request("crashed", "second")));
		assertThat(batch).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(batch.get(0).isTakeover()).isTrue();
		assertThat(batch.get(2).record().owner()).isEqualTo("first");
	}

	@Test
	void aBatchThatFailsPartWayGivesBackWhatItClaimed() {
		// a key of another type fails its command (and the claim script) with WRONGTYPE
		this.redis.opsForList().leftPush(key("broken"), "not a record");
		assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> this.store
			.claimAll(List.of(request("before", "batch-before"), request("broken", "batch-broken"),
					request("after", "batch-after"))))
			.withMessageContaining("WRONGTYPE");
		assertThat(this.store.find(id("before"))).isEmpty();
		assertThat(this.store.find(id("after"))).isEmpty();
		assertThat(claim("before", "later").outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@Test
	void aCompletionOfARecordPastItsRetentionIsRefusedThoughTheRecordIsTheValueItWrote() {
		List<ClaimResult> batch = this.store.claimAll(List.of(
				new ClaimRequest(id("short"), "owner-short", null, Duration.ofSeconds(1), Duration.ofMinutes(1)),
				request("long", "owner-long")));
		// Redis still holds both (its time to live runs on its own clock); the store's clock says over
		this.clock.advance(Duration.ofSeconds(62));
		List<ClaimHandle> handles = batch.stream().map(ClaimResult::acquiredHandle).toList();
		assertThat(this.store.completeAll(handles, Arrays.asList("\"short\"", "\"long\"")))
			.containsExactly(false, true);
		assertThat(handles.get(0).complete("\"short\"")).isFalse();
		assertThat(this.store.find(id("short"))).isEmpty();
	}

	@Test
	void aCompletedTakeoverKeepsItsAttemptRecoveryPointFingerprintAndCreationTime() {
		Instant createdAt = this.clock.instant();
		ClaimHandle crashed = this.store
			.claim(new ClaimRequest(id("crashed"), "crashed-owner", "fp-1", LEASE, RETENTION))
			.acquiredHandle();
		assertThat(crashed.saveRecoveryPoint("stock-reserved")).isTrue();
		this.clock.advance(LEASE.plusSeconds(1));
		List<ClaimResult> batch = this.store.claimAll(List.of(
				new ClaimRequest(id("crashed"), "batch-owner", "fp-1", LEASE, RETENTION), request("new", "new")));
		assertThat(batch.get(0).isTakeover()).isTrue();
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(this.store.completeAll(batch.stream().map(ClaimResult::acquiredHandle).toList(),
				Arrays.asList("\"done\"", null)))
			.containsExactly(true, true);
		IdempotencyRecord done = this.store.find(id("crashed")).orElseThrow();
		assertThat(done.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(done.owner()).isEqualTo("batch-owner");
		assertThat(done.attempt()).isEqualTo(2);
		assertThat(done.recoveryPoint()).isEqualTo("stock-reserved");
		assertThat(done.fingerprint()).isEqualTo("fp-1");
		assertThat(done.response()).isEqualTo("\"done\"");
		assertThat(done.createdAt()).isEqualTo(createdAt);
		assertThat(done.updatedAt()).isEqualTo(this.clock.instant());
		assertThat(done.expiresAt()).isEqualTo(this.clock.instant().plus(RETENTION));
		assertThat(this.store.find(id("new")).orElseThrow().response()).isNull();
	}

	@Test
	void aCompletionAfterARenewalOrARecoveryPointFindsTheRecordChangedAndStillCompletesIt() {
		List<ClaimResult> batch = this.store.claimAll(List.of(request("renewed", "owner-renewed"),
				request("saved", "owner-saved"), request("released", "owner-released")));
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(batch.get(0).acquiredHandle().renew()).isTrue();
		assertThat(batch.get(1).acquiredHandle().saveRecoveryPoint("half-way")).isTrue();
		assertThat(batch.get(2).acquiredHandle().release(RETRYABLE)).isTrue();
		assertThat(this.store.completeAll(batch.stream().map(ClaimResult::acquiredHandle).toList(),
				Arrays.asList("\"r\"", "\"s\"", "\"x\"")))
			.containsExactly(true, true, false);
		assertThat(this.store.find(id("renewed")).orElseThrow().response()).isEqualTo("\"r\"");
		IdempotencyRecord saved = this.store.find(id("saved")).orElseThrow();
		assertThat(saved.response()).isEqualTo("\"s\"");
		assertThat(saved.recoveryPoint()).isEqualTo("half-way");
		assertThat(this.store.find(id("released"))).isEmpty();
	}

	private ClaimResult claim(String key, String owner) {
		return this.store.claim(request(key, owner));
	}

	private ClaimRequest request(String key, String owner) {
		return new ClaimRequest(id(key), owner, null, LEASE, RETENTION);
	}

	private RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

	private String key(String key) {
		return this.store.key(id(key));
	}

}
