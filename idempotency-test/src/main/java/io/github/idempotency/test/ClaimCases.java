package io.github.idempotency.test;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.IdempotencyStoreContract.CardDeclinedException;
import org.junit.jupiter.api.Test;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static io.github.idempotency.test.IdempotencyStoreContract.RETRYABLE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim and what it answers: the first claim, a key running, finished, failed (its
 * message escaped and bounded), released, or reused with another payload.
 */
interface ClaimCases extends ContractFixture {

	@Test
	default void firstClaimAcquiresAttemptOne() {
		ClaimResult claim = claim("k1", "owner-1", "fp-1");
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(claim.isTakeover()).isFalse();
		IdempotencyRecord record = claim.record();
		assertThat(record.id()).isEqualTo(id("k1"));
		assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(record.owner()).isEqualTo("owner-1");
		assertThat(record.attempt()).isEqualTo(1);
		assertThat(record.recoveryPoint()).isNull();
		assertThat(record.leaseUntil()).isEqualTo(clock().instant().plus(LEASE));
		assertThat(store().find(id("k1"))).as("the claim answers the record as stored").contains(record);
	}

	@Test
	default void secondClaimOfARunningKeyIsInProgress() {
		claim("k1", "owner-1", null);
		ClaimResult second = claim("k1", "owner-2", null);
		assertThat(second.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(second.record().owner()).isEqualTo("owner-1");
		assertThat(second.record().attempt()).isEqualTo(1);
	}

	@Test
	default void completedKeyIsADuplicateCarryingItsResponse() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").complete("{\"amount\":42}")).isTrue();
		ClaimResult duplicate = claim("k1", "owner-2", null);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(duplicate.record().response()).isEqualTo("{\"amount\":42}");
	}

	@Test
	default void voidCompletionStoresNoResponse() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").complete(null)).isTrue();
		ClaimResult duplicate = claim("k1", "owner-2", null);
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isNull();
	}

	@Test
	default void failedKeyReplaysItsError() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").fail(new CardDeclinedException("declined: 51"))).isTrue();
		ClaimResult replay = claim("k1", "owner-2", null);
		assertThat(replay.outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(replay.record().status()).isEqualTo(RecordStatus.FAILED);
		assertThat(replay.record().errorType()).isEqualTo(CardDeclinedException.class.getName());
		assertThat(replay.record().errorMessage()).isEqualTo("declined: 51");
	}

	@Test
	default void aFailureWhoseMessageNoColumnTakesAsItIsIsRecordedEscapedAndBounded() {
		String message = "declined:\u0000 at \uD800 " + "x".repeat(70_000);
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").fail(new CardDeclinedException(message))).isTrue();
		ClaimResult replay = claim("k1", "owner-2", null);
		assertThat(replay.outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(replay.record().errorMessage()).startsWith("declined:\\u0000 at \\uD800 xxx")
			.hasSize(IdempotencyRecord.MAX_ERROR_MESSAGE_LENGTH)
			.endsWith("x\u2026");
		assertThat(store().find(id("k1")).orElseThrow().errorMessage()).isEqualTo(replay.record().errorMessage());
	}

	@Test
	default void releasedKeyCanBeClaimedAfresh() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").release(RETRYABLE)).isTrue();
		assertThat(store().find(id("k1"))).isEmpty();
		ClaimResult again = claim("k1", "owner-2", null);
		assertThat(again.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(again.record().attempt()).isEqualTo(1);
	}

	@Test
	default void keyReusedWithAnotherPayloadIsAMismatchWhateverTheState() {
		claim("k1", "owner-1", "fp-1");
		assertThat(claim("k1", "owner-2", "fp-2").outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(claim("k1", "owner-2", "fp-1").outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		clock().advance(LEASE.plusSeconds(1));
		assertThat(claim("k1", "owner-2", "fp-2").outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		ClaimResult takeover = claim("k1", "owner-3", "fp-1");
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		handle("owner-3").complete("1");
		ClaimResult mismatch = claim("k1", "owner-4", "fp-2");
		assertThat(mismatch.outcome()).isEqualTo(ClaimOutcome.MISMATCH);
		assertThat(mismatch.record().fingerprint()).isEqualTo("fp-1");
		assertThat(claim("k1", "owner-4", "fp-1").outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
	}

}
