package io.github.idempotency.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract every {@link IdempotencyStore} must pass, on its real server. A store's test
 * is a small subclass that creates the store on the given {@link Clock} (every
 * time-dependent case moves that clock instead of sleeping):
 *
 * <pre class="code">
 * class PostgresJdbcIdempotencyStoreTest extends IdempotencyStoreContract {
 *     &#64;Override
 *     protected IdempotencyStore createStore(Clock clock) {
 *         return new JdbcIdempotencyStore(dataSource, "idempotency_record", Duration.ofSeconds(5), clock);
 *     }
 * }
 * </pre>
 *
 * Each test uses a workflow of its own, so the suite may run against a server shared with
 * other tests.
 */
public abstract class IdempotencyStoreContract {

	protected static final Duration LEASE = Duration.ofSeconds(30);

	protected static final Duration RETENTION = Duration.ofHours(1);

	protected static final int THREADS = 16;

	protected final MutableClock clock = new MutableClock(
			Instant.now().truncatedTo(ChronoUnit.MILLIS).plus(Duration.ofDays(1)));

	protected static final RuntimeException RETRYABLE = new IllegalStateException("the broker redelivers it");

	protected IdempotencyStore store;

	private final Map<String, ClaimHandle> handles = new ConcurrentHashMap<>();

	protected String workflow;

	/**
	 * Creates the store under test on {@code clock}.
	 * @param clock the clock the store must read the time from
	 * @return the store
	 */
	protected abstract IdempotencyStore createStore(Clock clock);

	/**
	 * Releases what {@link #createStore(Clock)} created. Nothing by default.
	 * @param store the store
	 */
	protected void destroyStore(IdempotencyStore store) {
	}

	@BeforeEach
	void createStoreUnderTest() {
		this.store = createStore(this.clock);
		this.workflow = "contract-" + UUID.randomUUID();
	}

	@AfterEach
	void destroyStoreUnderTest() {
		destroyStore(this.store);
	}

	@Test
	void firstClaimAcquiresAttemptOne() {
		ClaimResult claim = claim("k1", "owner-1", "fp-1");
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(claim.isTakeover()).isFalse();
		IdempotencyRecord record = claim.record();
		assertThat(record.id()).isEqualTo(id("k1"));
		assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(record.owner()).isEqualTo("owner-1");
		assertThat(record.attempt()).isEqualTo(1);
		assertThat(record.recoveryPoint()).isNull();
		assertThat(record.leaseUntil()).isEqualTo(this.clock.instant().plus(LEASE));
		assertThat(this.store.find(id("k1"))).as("the claim answers the record as stored").contains(record);
	}

	@Test
	void secondClaimOfARunningKeyIsInProgress() {
		claim("k1", "owner-1", null);
		ClaimResult second = claim("k1", "owner-2", null);
		assertThat(second.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(second.record().owner()).isEqualTo("owner-1");
		assertThat(second.record().attempt()).isEqualTo(1);
	}

	@Test
	void completedKeyIsADuplicateCarryingItsResponse() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").complete("{\"amount\":42}")).isTrue();
		ClaimResult duplicate = claim("k1", "owner-2", null);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(duplicate.record().response()).isEqualTo("{\"amount\":42}");
	}

	@Test
	void aCompletedRecordKeepsTheOwnerThatCompletedIt() {
		// the engine tells a completion whose answer was lost from a takeover by it
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").complete("1")).isTrue();
		assertThat(handle("owner-1").complete("1")).as("asked again").isFalse();
		IdempotencyRecord record = this.store.find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.owner()).isEqualTo("owner-1");
	}

	@Test
	void aFailedRecordKeepsTheOwnerThatFailedIt() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").fail(new CardDeclinedException("declined: 51"))).isTrue();
		assertThat(handle("owner-1").fail(new CardDeclinedException("declined: 51"))).as("asked again").isFalse();
		IdempotencyRecord record = this.store.find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record.owner()).isEqualTo("owner-1");
	}

	@Test
	void voidCompletionStoresNoResponse() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").complete(null)).isTrue();
		ClaimResult duplicate = claim("k1", "owner-2", null);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isNull();
	}

	@Test
	void failedKeyReplaysItsError() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").fail(new CardDeclinedException("declined: 51"))).isTrue();
		ClaimResult replay = claim("k1", "owner-2", null);
		assertThat(replay.outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(replay.record().status()).isEqualTo(RecordStatus.FAILED);
		assertThat(replay.record().errorType()).isEqualTo(CardDeclinedException.class.getName());
		assertThat(replay.record().errorMessage()).isEqualTo("declined: 51");
	}

	@Test
	void aFailureWhoseMessageNoColumnTakesAsItIsIsRecordedEscapedAndBounded() {
		String message = "declined:\u0000 at \uD800 " + "x".repeat(70_000);
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").fail(new CardDeclinedException(message))).isTrue();
		ClaimResult replay = claim("k1", "owner-2", null);
		assertThat(replay.outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(replay.record().errorMessage()).startsWith("declined:\\u0000 at \\uD800 xxx")
			.hasSize(IdempotencyRecord.MAX_ERROR_MESSAGE_LENGTH)
			.endsWith("x\u2026");
		assertThat(this.store.find(id("k1")).orElseThrow().errorMessage()).isEqualTo(replay.record().errorMessage());
	}

	@Test
	void releasedKeyCanBeClaimedAfresh() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").release(RETRYABLE)).isTrue();
		assertThat(this.store.find(id("k1"))).isEmpty();
		ClaimResult again = claim("k1", "owner-2", null);
		assertThat(again.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(again.record().attempt()).isEqualTo(1);
	}

	@Test
	void expiredLeaseIsTakenOverWithTheNextAttemptAndTheRecoveryPoint() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").saveRecoveryPoint("stock-reserved")).isTrue();
		this.clock.advance(LEASE.plusSeconds(1));
		ClaimResult takeover = claim("k1", "owner-2", null);
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.isTakeover()).isTrue();
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().owner()).isEqualTo("owner-2");
		assertThat(takeover.record().recoveryPoint()).isEqualTo("stock-reserved");
		this.clock.advance(LEASE.plusSeconds(1));
		assertThat(claim("k1", "owner-3", null).record().attempt()).isEqualTo(3);
	}

	@Test
	void leaseIsLiveUntilItsLastMillisecond() {
		claim("k1", "owner-1", null);
		this.clock.advance(LEASE.minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@Test
	void staleOwnerCanNeitherCompleteNorFailNorReleaseNorRenew() {
		claim("k1", "owner-1", null);
		this.clock.advance(LEASE.plusSeconds(1));
		claim("k1", "owner-2", null);
		assertThat(handle("owner-1").complete("\"late\"")).isFalse();
		assertThat(handle("owner-1").fail(new IllegalStateException("late"))).isFalse();
		assertThat(handle("owner-1").release(RETRYABLE)).isFalse();
		assertThat(handle("owner-1").renew()).isFalse();
		assertThat(handle("owner-1").saveRecoveryPoint("late")).isFalse();
		IdempotencyRecord record = this.store.find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(record.owner()).isEqualTo("owner-2");
		assertThat(record.recoveryPoint()).isNull();
		assertThat(handle("owner-2").complete("\"on time\"")).isTrue();
		assertThat(claim("k1", "owner-3", null).record().response()).isEqualTo("\"on time\"");
	}

	@Test
	void finishedRecordsCannotBeChangedByTheirOwner() {
		claim("k1", "owner-1", null);
		handle("owner-1").complete("\"first\"");
		assertThat(handle("owner-1").complete("\"second\"")).isFalse();
		assertThat(handle("owner-1").fail(new IllegalStateException("no"))).isFalse();
		assertThat(handle("owner-1").release(RETRYABLE)).isFalse();
		assertThat(handle("owner-1").renew()).isFalse();
		IdempotencyRecord record = this.store.find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.response()).isEqualTo("\"first\"");
	}

	@Test
	void releasedClaimCanNeitherCompleteNorRenewAndItsKeyIsFree() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").release(RETRYABLE)).isTrue();
		assertThat(handle("owner-1").complete("1")).isFalse();
		assertThat(handle("owner-1").renew()).isFalse();
		assertThat(handle("owner-1").release(RETRYABLE)).isFalse();
		assertThat(this.store.find(id("k1"))).isEmpty();
		claim("k1", "owner-2", null);
		assertThat(handle("owner-1").complete("1")).isFalse();
		assertThat(this.store.find(id("k1")).orElseThrow().owner()).isEqualTo("owner-2");
	}

	@Test
	void renewalKeepsARunningClaimFromBeingTakenOver() {
		claim("k1", "owner-1", null);
		this.clock.advance(LEASE.dividedBy(3).multipliedBy(2));
		assertThat(handle("owner-1").renew()).isTrue();
		this.clock.advance(LEASE.dividedBy(3).multipliedBy(2));
		ClaimResult other = claim("k1", "owner-2", null);
		assertThat(other.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(other.record().leaseUntil()).isAfter(this.clock.instant());
	}

	@Test
	void recoveryPointIsStoredAndRenewsTheLease() {
		claim("k1", "owner-1", null);
		this.clock.advance(LEASE.minusSeconds(1));
		assertThat(handle("owner-1").saveRecoveryPoint("step-1")).isTrue();
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(handle("owner-1").saveRecoveryPoint("step-2")).isTrue();
		IdempotencyRecord record = this.store.find(id("k1")).orElseThrow();
		assertThat(record.recoveryPoint()).isEqualTo("step-2");
		assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
	}

	@Test
	void aRunRenewedForLongerThanItsRetentionLeavesItsAttemptAndRecoveryPointToTheTakeover() {
		// a retention shorter than the lease, and a run renewed for far longer than both
		Duration lease = Duration.ofSeconds(30);
		Duration retention = Duration.ofSeconds(10);
		assertThat(claim("k1", "owner-1", lease, retention).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		this.clock.advance(lease.dividedBy(3));
		assertThat(handle("owner-1").saveRecoveryPoint("stock-reserved")).isTrue();
		for (int renewal = 1; renewal <= 6; renewal++) {
			this.clock.advance(lease.dividedBy(3).multipliedBy(2));
			assertThat(handle("owner-1").renew()).as("renewal %d", renewal).isTrue();
		}
		Instant leaseEnd = this.clock.instant().plus(lease);
		IdempotencyRecord renewed = this.store.find(id("k1")).orElseThrow();
		assertThat(renewed.leaseUntil()).isEqualTo(leaseEnd);
		// the run crashes; the next delivery comes after its lease, within the retention
		this.clock.advance(lease.plus(retention).minusMillis(1));
		ClaimResult takeover = claim("k1", "owner-2", lease, retention);
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.isTakeover()).as("a takeover, not a new record").isTrue();
		assertThat(takeover.record().owner()).isEqualTo("owner-2");
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().recoveryPoint()).isEqualTo("stock-reserved");
		assertThat(handle("owner-1").complete("\"late\"")).as("the crashed run's claim is fenced").isFalse();
		assertThat(renewed.expiresAt()).as("kept for the retention past the renewed lease")
			.isAfterOrEqualTo(leaseEnd.plus(retention));
	}

	@Test
	void aRunSavingRecoveryPointsForLongerThanItsRetentionLeavesThemToTheTakeover() {
		Duration lease = Duration.ofSeconds(30);
		Duration retention = Duration.ofSeconds(10);
		assertThat(claim("k1", "owner-1", lease, retention).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		for (int step = 1; step <= 6; step++) {
			this.clock.advance(lease.dividedBy(3).multipliedBy(2));
			assertThat(handle("owner-1").saveRecoveryPoint("step-" + step)).as("step %d", step).isTrue();
		}
		Instant leaseEnd = this.clock.instant().plus(lease);
		IdempotencyRecord saved = this.store.find(id("k1")).orElseThrow();
		assertThat(saved.leaseUntil()).isEqualTo(leaseEnd);
		assertThat(saved.recoveryPoint()).isEqualTo("step-6");
		// the run crashes; the next delivery comes after its lease, within the retention
		this.clock.advance(lease.plus(retention).minusMillis(1));
		ClaimResult takeover = claim("k1", "owner-2", lease, retention);
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.isTakeover()).as("a takeover, not a new record").isTrue();
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().recoveryPoint()).isEqualTo("step-6");
		assertThat(saved.expiresAt()).as("kept for the retention past the renewed lease")
			.isAfterOrEqualTo(leaseEnd.plus(retention));
	}

	@Test
	void finishedRecordExpiresAfterItsRetention() {
		Instant leaseEnd = claim("k1", "owner-1", null).record().leaseUntil();
		this.clock.advance(Duration.ofSeconds(2));
		handle("owner-1").complete("1");
		Instant expiresAt = assertKeptForTheRetention("k1", leaseEnd);
		this.clock.advance(Duration.between(this.clock.instant(), expiresAt).minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		this.clock.advance(Duration.ofMillis(2));
		assertThat(this.store.find(id("k1"))).isEmpty();
		ClaimResult fresh = claim("k1", "owner-3", null);
		assertThat(fresh.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(fresh.record().attempt()).isEqualTo(1);
	}

	@Test
	void failedRecordExpiresAfterItsRetention() {
		Instant leaseEnd = claim("k1", "owner-1", null).record().leaseUntil();
		handle("owner-1").fail(new CardDeclinedException(null));
		Instant expiresAt = assertKeptForTheRetention("k1", leaseEnd);
		this.clock.advance(Duration.between(this.clock.instant(), expiresAt).minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.FAILED);
		this.clock.advance(Duration.ofMillis(2));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	/** The ways a claim is finished. */
	enum Finish {

		COMPLETE, COMPLETE_IN_A_BATCH, FAIL

	}

	@ParameterizedTest
	@EnumSource(Finish.class)
	void recordFinishedAfterItsLeaseIsStillKeptForTheRetention(Finish finish) {
		// the run outlives its lease, nobody takes the key over, and it finishes then
		Instant leaseEnd = claim("k1", "owner-1", null).record().leaseUntil();
		this.clock.advance(LEASE.plusSeconds(5));
		ClaimHandle handle = handle("owner-1");
		boolean finished = switch (finish) {
			case COMPLETE -> handle.complete("1");
			case COMPLETE_IN_A_BATCH -> this.store.completeAll(List.of(handle), List.of("1")).get(0);
			case FAIL -> handle.fail(new CardDeclinedException(null));
		};
		assertThat(finished).isTrue();
		Instant expiresAt = assertKeptForTheRetention("k1", leaseEnd);
		this.clock.advance(Duration.between(this.clock.instant(), expiresAt).minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome())
			.isEqualTo((finish == Finish.FAIL) ? ClaimOutcome.FAILED : ClaimOutcome.DUPLICATE);
	}

	@Test
	void workflowsAreIsolated() {
		String other = this.workflow + "-other";
		assertThat(claim("k1", "owner-1", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(this.store.claim(request(new RecordId(other, "k1"), "owner-2", null)).outcome())
			.isEqualTo(ClaimOutcome.ACQUIRED);
		handle("owner-1").complete("1");
		assertThat(this.store.claim(request(new RecordId(other, "k1"), "owner-3", null)).outcome())
			.isEqualTo(ClaimOutcome.IN_PROGRESS);
	}

	@Test
	void workflowAndKeyNeverRunTogether() {
		RecordId first = new RecordId(this.workflow + ":a", "b");
		RecordId second = new RecordId(this.workflow, "a:b");
		RecordId third = new RecordId(this.workflow + ":a:b", "c");
		RecordId fourth = new RecordId(this.workflow + ":a", "b:c");
		for (RecordId id : List.of(first, second, third, fourth)) {
			assertThat(this.store.claim(request(id, "owner-" + id, null)).outcome()).as(id.toString())
				.isEqualTo(ClaimOutcome.ACQUIRED);
		}
	}

	@Test
	void keyReusedWithAnotherPayloadIsAMismatchWhateverTheState() {
		claim("k1", "owner-1", "fp-1");
		assertThat(claim("k1", "owner-2", "fp-2").outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(claim("k1", "owner-2", "fp-1").outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		this.clock.advance(LEASE.plusSeconds(1));
		assertThat(claim("k1", "owner-2", "fp-2").outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		ClaimResult takeover = claim("k1", "owner-3", "fp-1");
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		handle("owner-3").complete("1");
		ClaimResult mismatch = claim("k1", "owner-4", "fp-2");
		assertThat(mismatch.outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(mismatch.record().fingerprint()).isEqualTo("fp-1");
		assertThat(claim("k1", "owner-4", "fp-1").outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
	}

	@Test
	void findReadsEveryFieldAndDeleteRemovesWhateverTheOwner() {
		Instant claimedAt = this.clock.instant();
		claim("k1", "owner-1", "fp-1");
		this.clock.advance(Duration.ofSeconds(2));
		handle("owner-1").complete("{\"ok\":true}");
		IdempotencyRecord record = this.store.find(id("k1")).orElseThrow();
		assertThat(record.id()).isEqualTo(id("k1"));
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.fingerprint()).isEqualTo("fp-1");
		assertThat(record.owner()).isEqualTo("owner-1");
		assertThat(record.attempt()).isEqualTo(1);
		assertThat(record.response()).isEqualTo("{\"ok\":true}");
		assertThat(record.createdAt()).isEqualTo(claimedAt);
		assertThat(record.updatedAt()).isEqualTo(this.clock.instant());
		assertThat(record.expiresAt()).isBetween(this.clock.instant().plus(RETENTION),
				claimedAt.plus(LEASE).plus(RETENTION));
		assertThat(this.store.delete(id("k1"))).isTrue();
		assertThat(this.store.delete(id("k1"))).isFalse();
		assertThat(this.store.find(id("k1"))).isEmpty();
	}

	@Test
	void keysAndResponsesAreStoredExactly() {
		String key = "ключ-🔑-" + "x".repeat(230);
		String response = "\"" + "é€😀".repeat(100_000) + "\"";
		assertThat(claim(key, "owner-1", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(handle("owner-1").complete(response)).isTrue();
		ClaimResult duplicate = claim(key, "owner-2", null);
		assertThat(duplicate.record().id().key()).isEqualTo(key);
		assertThat(duplicate.record().response()).isEqualTo(response);
		assertThat(claim(key.substring(0, key.length() - 1), "owner-3", null).outcome())
			.isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@Test
	void keysThatDifferOnlyInTrailingSpacesCaseOrNormalizationAreDistinct() {
		List<String> keys = List.of("k", "k ", "K", "k\t", "caf\u00e9", "cafe\u0301", " k");
		for (String key : keys) {
			assertThat(claim(key, "owner-" + key, null).outcome()).as("[" + key + "]").isEqualTo(ClaimOutcome.ACQUIRED);
			assertThat(handle("owner-" + key).complete("\"owner-" + key + "\"")).isTrue();
		}
		for (String key : keys) {
			ClaimResult duplicate = claim(key, "again-" + key, null);
			assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
			assertThat(duplicate.record().id().key()).isEqualTo(key);
			assertThat(duplicate.record().response()).isEqualTo("\"owner-" + key + "\"");
		}
	}

	@Test
	void racingClaimsOfOneKeyAcquireItOnce() throws Exception {
		for (int round = 0; round < 10; round++) {
			String key = "race-" + round;
			List<ClaimResult> results = race(THREADS, (thread) -> claim(key, "owner-" + thread, null));
			assertThat(results).filteredOn((result) -> result.outcome() == ClaimOutcome.ACQUIRED).hasSize(1);
			assertThat(results).filteredOn((result) -> result.outcome() == ClaimOutcome.IN_PROGRESS)
				.hasSize(THREADS - 1);
		}
	}

	@Test
	void racingTakeoversOfAnExpiredLeaseSucceedOnce() throws Exception {
		for (int round = 0; round < 5; round++) {
			String key = "takeover-" + round;
			claim(key, "crashed", null);
			this.clock.advance(LEASE.plusSeconds(1));
			List<ClaimResult> results = race(THREADS, (thread) -> claim(key, "owner-" + thread, null));
			assertThat(results).filteredOn((result) -> result.outcome() == ClaimOutcome.ACQUIRED)
				.singleElement()
				.satisfies((result) -> assertThat(result.record().attempt()).isEqualTo(2));
		}
	}

	@Test
	void racingCompletionsAndDuplicatesNeverRunAKeyTwice() throws Exception {
		int keys = 20;
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		race(THREADS, (thread) -> {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			for (int i = 0; i < 60; i++) {
				String key = "fuzz-" + random.nextInt(keys);
				String owner = "owner-" + thread + "-" + i;
				ClaimResult claim = claim(key, owner, null);
				if (claim.outcome() == ClaimOutcome.ACQUIRED) {
					runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
					assertThat(handle(owner).complete("\"" + owner + "\"")).isTrue();
				}
				else if (claim.outcome() == ClaimOutcome.DUPLICATE) {
					assertThat(claim.record().response()).startsWith("\"owner-");
				}
				else {
					assertThat(claim.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
				}
			}
			return null;
		});
		assertThat(runs.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
		for (String key : runs.keySet()) {
			assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		}
	}

	@Test
	void claimAllAnswersEachRequestAtItsPosition() {
		claim("done", "owner-done", null);
		handle("owner-done").complete("\"stored\"");
		claim("failed", "owner-failed", null);
		handle("owner-failed").fail(new CardDeclinedException("declined"));
		claim("running", "owner-running", null);
		claim("reused", "owner-reused", "fp-1");
		handle("owner-reused").complete(null);
		List<ClaimResult> results = this.store.claimAll(List.of(request(id("new-1"), "batch-1", null),
				request(id("done"), "batch-2", null), request(id("failed"), "batch-3", null),
				request(id("running"), "batch-4", null), request(id("reused"), "batch-5", "fp-2"),
				request(id("new-2"), "batch-6", null)));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.FAILED,
					ClaimOutcome.IN_PROGRESS, ClaimOutcome.MISMATCH, ClaimOutcome.ACQUIRED);
		assertThat(results.get(0).record().owner()).isEqualTo("batch-1");
		assertThat(results.get(1).record().response()).isEqualTo("\"stored\"");
		assertThat(results.get(2).record().errorMessage()).isEqualTo("declined");
		assertThat(results.get(3).record().owner()).isEqualTo("owner-running");
		assertThat(results.get(0).acquiredHandle().complete("\"one\"")).isTrue();
		assertThat(results.get(5).acquiredHandle().release(RETRYABLE)).isTrue();
		assertThat(this.store.find(id("new-1")).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(id("new-2"))).isEmpty();
		assertThat(this.store.claimAll(List.of())).isEmpty();
	}

	/**
	 * A batch claim stores each claim's own lease, expiry and fingerprint, whether the
	 * claims are alike (one workflow, lease, retention and fingerprint: a store may send
	 * those once) or each differs; a lease ends when its own claim says.
	 * @param alike whether the batch's claims are alike
	 */
	@ParameterizedTest(name = "alike: {0}")
	@ValueSource(booleans = { true, false })
	void claimAllStoresEachClaimsOwnLeaseExpiryAndFingerprint(boolean alike) {
		Instant now = this.clock.instant();
		List<ClaimRequest> requests = new ArrayList<>();
		// apart, the second claim's lease ends first
		List<Duration> leases = alike ? List.of(LEASE, LEASE, LEASE)
				: List.of(LEASE.plusSeconds(20), LEASE, LEASE.plusSeconds(10));
		for (int i = 0; i < 3; i++) {
			Duration lease = leases.get(i);
			Duration retention = alike ? RETENTION : RETENTION.plusMinutes(i);
			String fingerprint = alike ? "fp" : (i == 1) ? null : "fp-" + i;
			requests.add(new ClaimRequest(id("own-" + i), "batch-" + i, fingerprint, lease, retention));
		}
		assertThat(this.store.claimAll(requests)).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		for (ClaimRequest request : requests) {
			IdempotencyRecord stored = this.store.find(request.id()).orElseThrow();
			assertThat(stored.owner()).isEqualTo(request.owner());
			assertThat(stored.fingerprint()).as(request.owner()).isEqualTo(request.fingerprint());
			assertThat(stored.leaseUntil()).as(request.owner()).isEqualTo(now.plus(request.leaseTtl()));
			assertThat(stored.expiresAt()).as(request.owner())
				.isEqualTo(now.plus(request.leaseTtl()).plus(request.retention()));
		}
		this.clock.advance(requests.get(1).leaseTtl().plusMillis(1));
		List<ClaimResult> later = this.store.claimAll(List.of(request(id("own-0"), "later-0", null),
				request(id("own-1"), "later-1", null), request(id("own-2"), "later-2", null)));
		assertThat(later).extracting(ClaimResult::isTakeover).containsExactly(alike, true, alike);
	}

	/**
	 * A batch may name several workflows, leases and retentions, in any order (a store
	 * that sends what its claims share once groups them): each claim is answered at its
	 * position, stored and completed as it would be alone.
	 */
	@Test
	void aBatchOfSeveralWorkflowsLeasesAndRetentionsIsClaimedAndCompletedAsEachAlone() {
		String other = this.workflow + "-other";
		this.store.claim(request(new RecordId(other, "done"), "earlier", null)).acquiredHandle().complete("\"done\"");
		Instant now = this.clock.instant();
		Duration shortLease = Duration.ofSeconds(5);
		List<ClaimRequest> requests = List.of(new ClaimRequest(new RecordId(other, "m-0"), "m-0", null, LEASE, RETENTION),
				new ClaimRequest(id("m-1"), "m-1", null, shortLease, RETENTION),
				request(new RecordId(other, "done"), "again", null),
				new ClaimRequest(id("m-3"), "m-3", null, LEASE, RETENTION.plusHours(1)),
				new ClaimRequest(new RecordId(other, "m-4"), "m-4", null, shortLease, RETENTION.plusHours(2)));
		List<ClaimResult> results = this.store.claimAll(requests);
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE,
					ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED);
		assertThat(results.get(2).record().response()).isEqualTo("\"done\"");
		for (int i : List.of(0, 1, 3, 4)) {
			ClaimRequest request = requests.get(i);
			IdempotencyRecord stored = this.store.find(request.id()).orElseThrow();
			assertThat(stored.owner()).isEqualTo(request.owner());
			assertThat(stored.leaseUntil()).as(request.owner()).isEqualTo(now.plus(request.leaseTtl()));
			assertThat(stored.expiresAt()).as(request.owner())
				.isEqualTo(now.plus(request.leaseTtl()).plus(request.retention()));
		}
		// the short leases run out: one is taken over, the other finishes late
		this.clock.advance(shortLease.plusSeconds(5));
		assertThat(this.store.claim(request(id("m-1"), "taker", null)).isTakeover()).isTrue();
		Instant finishedAt = this.clock.instant();
		List<Integer> order = List.of(4, 1, 3, 0);
		assertThat(this.store.completeAll(order.stream().map((i) -> results.get(i).acquiredHandle()).toList(),
				order.stream().map((i) -> "\"" + i + "\"").toList()))
			.containsExactly(true, false, true, true);
		for (int i : List.of(0, 3, 4)) {
			ClaimRequest request = requests.get(i);
			IdempotencyRecord stored = this.store.find(request.id()).orElseThrow();
			assertThat(stored.status()).as(request.owner()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(stored.response()).as(request.owner()).isEqualTo("\"" + i + "\"");
			Instant leaseEnd = now.plus(request.leaseTtl());
			assertThat(stored.expiresAt()).as(request.owner())
				.isBetween(finishedAt.plus(request.retention()),
						(leaseEnd.isAfter(finishedAt) ? leaseEnd : finishedAt).plus(request.retention()));
		}
		IdempotencyRecord taken = this.store.find(id("m-1")).orElseThrow();
		assertThat(taken.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(taken.owner()).isEqualTo("taker");
	}

	@Test
	void claimAllAcquiresAKeyNamedTwiceOnce() {
		List<ClaimResult> results = this.store.claimAll(List.of(request(id("twice"), "first", null),
				request(id("other"), "other", null), request(id("twice"), "second", null)));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(results.get(2).record().owner()).isEqualTo("first");
		assertThat(results.get(0).acquiredHandle().complete(null)).isTrue();
		assertThat(this.store.find(id("twice")).orElseThrow().owner()).isEqualTo("first");
	}

	@Test
	void racingOverlappingBatchesAcquireEachKeyOnce() throws Exception {
		int keys = 64;
		int batchSize = 24;
		for (int round = 0; round < 3; round++) {
			String prefix = "batch-" + round + "-";
			List<List<ClaimResult>> results = race(THREADS, (thread) -> {
				List<ClaimRequest> requests = new ArrayList<>();
				for (int i = 0; i < batchSize; i++) {
					// each thread's window overlaps its neighbours'
					String key = prefix + ((thread * 4 + i) % keys);
					requests.add(request(id(key), "owner-" + thread + "-" + i, null));
				}
				Collections.shuffle(requests);
				List<ClaimResult> claimed = this.store.claimAll(requests);
				for (int i = 0; i < claimed.size(); i++) {
					assertThat(claimed.get(i).record().id()).isEqualTo(requests.get(i).id());
				}
				return claimed;
			});
			Map<RecordId, AtomicInteger> acquired = new ConcurrentHashMap<>();
			for (List<ClaimResult> batch : results) {
				for (ClaimResult result : batch) {
					if (result.outcome() == ClaimOutcome.ACQUIRED) {
						acquired.computeIfAbsent(result.record().id(), (id) -> new AtomicInteger()).incrementAndGet();
					}
					else {
						assertThat(result.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
					}
				}
			}
			assertThat(acquired).hasSize(keys).allSatisfy((id, count) -> assertThat(count).hasValue(1));
		}
	}

	@Test
	void claimAllAnswersEveryOutcomeAtItsPosition() {
		claim("expired", "owner-expired", null);
		handle("owner-expired").complete("\"old\"");
		this.clock.advance(RETENTION.plusSeconds(1));
		claim("crashed", "owner-crashed", "fp-1");
		assertThat(handle("owner-crashed").saveRecoveryPoint("stock-reserved")).isTrue();
		this.clock.advance(LEASE.plusSeconds(1));
		claim("done", "owner-done", null);
		handle("owner-done").complete("\"stored\"");
		claim("failed", "owner-failed", null);
		handle("owner-failed").fail(new CardDeclinedException("declined"));
		claim("reused", "owner-reused", "fp-1");
		handle("owner-reused").complete(null);
		claim("running", "owner-running", null);
		List<ClaimResult> results = this.store.claimAll(List.of(request(id("new"), "batch-new", "fp-n"),
				request(id("done"), "batch-done", null), request(id("failed"), "batch-failed", null),
				request(id("reused"), "batch-reused", "fp-2"), request(id("running"), "batch-running", null),
				request(id("expired"), "batch-expired", null), request(id("crashed"), "batch-crashed", "fp-1"),
				request(id("new"), "batch-new-again", "fp-n")));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.FAILED, ClaimOutcome.MISMATCH,
					ClaimOutcome.IN_PROGRESS, ClaimOutcome.ACQUIRED, ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(results).extracting((result) -> result.record().id().key())
			.containsExactly("new", "done", "failed", "reused", "running", "expired", "crashed", "new");
		assertThat(results.get(0).record().owner()).isEqualTo("batch-new");
		assertThat(results.get(0).record().attempt()).isEqualTo(1);
		assertThat(results.get(1).record().response()).isEqualTo("\"stored\"");
		assertThat(results.get(2).record().errorType()).isEqualTo(CardDeclinedException.class.getName());
		assertThat(results.get(2).record().errorMessage()).isEqualTo("declined");
		assertThat(results.get(3).record().fingerprint()).isEqualTo("fp-1");
		assertThat(results.get(4).record().owner()).isEqualTo("owner-running");
		assertThat(results.get(5).isTakeover()).isFalse();
		assertThat(results.get(5).record().attempt()).isEqualTo(1);
		assertThat(results.get(5).record().response()).isNull();
		assertThat(results.get(6).isTakeover()).isTrue();
		assertThat(results.get(6).record().attempt()).isEqualTo(2);
		assertThat(results.get(6).record().owner()).isEqualTo("batch-crashed");
		assertThat(results.get(6).record().recoveryPoint()).isEqualTo("stock-reserved");
		assertThat(results.get(7).record().owner()).as("the same key twice is acquired once").isEqualTo("batch-new");
		assertThat(handle("owner-crashed").complete("\"late\"")).as("the crashed run's claim is fenced").isFalse();
		for (String key : List.of("new", "expired", "crashed")) {
			ClaimResult later = claim(key, "later-" + key, null);
			assertThat(later.outcome()).as(key).isEqualTo(ClaimOutcome.IN_PROGRESS);
			assertThat(later.record().owner()).isEqualTo("batch-" + key);
		}
		List<ClaimHandle> acquired = List.of(results.get(0).acquiredHandle(), results.get(5).acquiredHandle(),
				results.get(6).acquiredHandle());
		assertThat(this.store.completeAll(acquired, Arrays.asList("\"new\"", null, "\"crashed\"")))
			.containsExactly(true, true, true);
		assertThat(this.store.find(id("new")).orElseThrow().response()).isEqualTo("\"new\"");
		assertThat(this.store.find(id("expired")).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(id("crashed")).orElseThrow().attempt()).isEqualTo(2);
		assertThat(this.store.find(id("running")).orElseThrow().owner()).isEqualTo("owner-running");
	}

	@Test
	void completeAllIsFencedPerClaim() {
		List<ClaimResult> claimed = this.store.claimAll(List.of(request(id("a"), "batch-a", null),
				new ClaimRequest(id("b"), "batch-b", null, Duration.ofSeconds(1), RETENTION),
				request(id("c"), "batch-c", null)));
		assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		this.clock.advance(Duration.ofSeconds(2));
		ClaimResult takeover = claim("b", "taker", null);
		assertThat(takeover.isTakeover()).isTrue();
		List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
		// not in key order: each answer and each response belongs to the handle at its position
		assertThat(this.store.completeAll(List.of(handles.get(1), handles.get(0), handles.get(2)),
				Arrays.asList("\"b\"", "\"a\"", null)))
			.containsExactly(false, true, true);
		assertThat(this.store.find(id("a")).orElseThrow().response()).isEqualTo("\"a\"");
		IdempotencyRecord taken = this.store.find(id("b")).orElseThrow();
		assertThat(taken.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(taken.owner()).isEqualTo("taker");
		assertThat(taken.response()).isNull();
		ClaimResult voidDuplicate = claim("c", "again", null);
		assertThat(voidDuplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(voidDuplicate.record().response()).isNull();
		assertThat(this.store.completeAll(List.of(handles.get(0), handles.get(2)), Arrays.asList("\"x\"", "\"y\"")))
			.as("finished records stay as they are")
			.containsExactly(false, false);
		assertThat(this.store.find(id("a")).orElseThrow().response()).isEqualTo("\"a\"");
		assertThat(handle("taker").complete("\"taker\"")).isTrue();
		assertThat(claim("b", "last", null).record().response()).isEqualTo("\"taker\"");
		assertThat(this.store.completeAll(List.of(), List.of())).isEmpty();
	}

	@Test
	void completeAllStoresEachResponseAsGiven() {
		List<String> responses = Arrays.asList("\"a,b\"", "{\"k\":\"{x}\"}", "\"back\\\\slash \\\"quoted\\\"\"",
				"\"\u00e9\u20ac\ud83d\ude00\"", "", "NULL", null);
		List<ClaimRequest> requests = new ArrayList<>();
		for (int i = 0; i < responses.size(); i++) {
			// the keys in the reverse of the order given
			requests.add(request(id("response-" + (responses.size() - i)), "batch-" + i, null));
		}
		List<ClaimHandle> handles = this.store.claimAll(requests).stream().map(ClaimResult::acquiredHandle).toList();
		assertThat(this.store.completeAll(handles, responses)).containsOnly(true);
		for (int i = 0; i < responses.size(); i++) {
			assertThat(this.store.find(id("response-" + (responses.size() - i))).orElseThrow().response())
				.as(String.valueOf(i))
				.isEqualTo(responses.get(i));
		}
	}

	@Test
	void racingBatchesThatCompleteWhatTheyAcquiredRunEachKeyOnce() throws Exception {
		int keys = 48;
		Map<RecordId, AtomicInteger> runs = new ConcurrentHashMap<>();
		Map<RecordId, String> runners = new ConcurrentHashMap<>();
		race(THREADS, (thread) -> {
			for (int round = 0; round < 4; round++) {
				List<ClaimRequest> requests = new ArrayList<>();
				for (int i = 0; i < 16; i++) {
					// each thread's window overlaps its neighbours' and its own earlier ones
					String key = "k" + ((thread * 3 + round * 5 + i) % keys);
					requests.add(request(id(key), "owner-" + thread + "-" + round + "-" + i, null));
				}
				requests.add(request(requests.get(0).id(), "owner-" + thread + "-" + round + "-again", null));
				Collections.shuffle(requests);
				List<ClaimResult> results = this.store.claimAll(requests);
				List<ClaimHandle> acquired = new ArrayList<>();
				List<@Nullable String> responses = new ArrayList<>();
				for (int i = 0; i < results.size(); i++) {
					ClaimResult result = results.get(i);
					assertThat(result.record().id()).isEqualTo(requests.get(i).id());
					if (result.outcome() == ClaimOutcome.ACQUIRED) {
						String owner = requests.get(i).owner();
						runs.computeIfAbsent(result.record().id(), (id) -> new AtomicInteger()).incrementAndGet();
						runners.put(result.record().id(), owner);
						acquired.add(result.acquiredHandle());
						responses.add("\"" + owner + "\"");
					}
					else if (result.outcome() == ClaimOutcome.DUPLICATE) {
						assertThat(result.record().response()).startsWith("\"owner-");
					}
					else {
						assertThat(result.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
					}
				}
				assertThat(this.store.completeAll(acquired, responses)).hasSize(acquired.size()).doesNotContain(false);
			}
			return null;
		});
		assertThat(runs).hasSize(keys).allSatisfy((id, count) -> assertThat(count).hasValue(1));
		runners.forEach((id, owner) -> {
			IdempotencyRecord record = this.store.find(id).orElseThrow();
			assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(record.response()).isEqualTo("\"" + owner + "\"");
		});
	}

	protected RecordId id(String key) {
		return new RecordId(this.workflow, key);
	}

	protected ClaimRequest request(RecordId id, String owner, @Nullable String fingerprint) {
		return new ClaimRequest(id, owner, fingerprint, LEASE, RETENTION);
	}

	/**
	 * Claims {@code key} for {@code owner}, keeping the handle of an acquired claim for
	 * {@link #handle(String)}.
	 * @param key the key in this test's workflow
	 * @param owner the claim's owner, unique within the test
	 * @param fingerprint the payload's fingerprint, or {@code null}
	 * @return the claim's answer
	 */
	protected ClaimResult claim(String key, String owner, @Nullable String fingerprint) {
		ClaimResult result = this.store.claim(request(id(key), owner, fingerprint));
		if (result.handle() != null) {
			this.handles.put(owner, result.handle());
		}
		return result;
	}

	/**
	 * Claims {@code key} for {@code owner} with the given lease and retention, keeping the
	 * handle of an acquired claim for {@link #handle(String)}.
	 * @param key the key in this test's workflow
	 * @param owner the claim's owner, unique within the test
	 * @param lease the claim's lease
	 * @param retention the claim's retention
	 * @return the claim's answer
	 */
	protected ClaimResult claim(String key, String owner, Duration lease, Duration retention) {
		ClaimResult result = this.store.claim(new ClaimRequest(id(key), owner, null, lease, retention));
		if (result.handle() != null) {
			this.handles.put(owner, result.handle());
		}
		return result;
	}

	/**
	 * The handle of the last claim {@code owner} acquired.
	 * @param owner the claim's owner
	 * @return its handle
	 */
	/**
	 * Asserts that the finished record of {@code key} is kept for the retention from now
	 * (when it finished), at most for the retention from the end of its lease if that is
	 * later: a store may leave a record finished within its lease at the claim's expiry.
	 * @param key the key
	 * @param leaseEnd the end of its claim's (last) lease
	 * @return when it expires
	 */
	protected Instant assertKeptForTheRetention(String key, Instant leaseEnd) {
		Instant finishedAt = this.clock.instant();
		Instant expiresAt = this.store.find(id(key)).orElseThrow().expiresAt();
		Instant latest = (leaseEnd.isAfter(finishedAt) ? leaseEnd : finishedAt).plus(RETENTION);
		assertThat(expiresAt).as("kept for the retention after it finished, at most after its lease's end")
			.isBetween(finishedAt.plus(RETENTION), latest);
		return expiresAt;
	}

	protected ClaimHandle handle(String owner) {
		ClaimHandle handle = this.handles.get(owner);
		assertThat(handle).as("the handle of " + owner).isNotNull();
		return handle;
	}

	/**
	 * Runs {@code task} on {@code threads} threads released at the same instant.
	 * @param <T> the result type
	 * @param threads how many threads
	 * @param task what each thread does, given its number
	 * @return the results, in thread order
	 * @throws Exception what a task threw
	 */
	protected <T> List<T> race(int threads, ThreadTask<T> task) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch ready = new CountDownLatch(threads);
			CountDownLatch go = new CountDownLatch(1);
			List<Future<T>> futures = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				int thread = i;
				futures.add(executor.submit(() -> {
					ready.countDown();
					go.await();
					return task.run(thread);
				}));
			}
			ready.await();
			go.countDown();
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get(60, TimeUnit.SECONDS));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
		}
	}

	@FunctionalInterface
	protected interface ThreadTask<T> {

		@Nullable T run(int thread) throws Exception;

	}

	/** A permanent failure of the tests' operations. */
	protected static class CardDeclinedException extends RuntimeException {

		public CardDeclinedException(@Nullable String message) {
			super(message);
		}

	}

}
