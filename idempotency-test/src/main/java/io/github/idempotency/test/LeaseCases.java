package io.github.idempotency.test;

import java.time.Duration;
import java.time.Instant;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;
import org.junit.jupiter.api.Test;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases: a lease is live to its last millisecond, an expired one is taken over with the
 * next attempt and the recovery point, a renewal or a recovery point extends it, and a run
 * renewed for longer than its retention still leaves its attempt to the takeover.
 */
interface LeaseCases extends ContractFixture {

	@Test
	default void expiredLeaseIsTakenOverWithTheNextAttemptAndTheRecoveryPoint() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").saveRecoveryPoint("stock-reserved")).isTrue();
		clock().advance(LEASE.plusSeconds(1));
		ClaimResult takeover = claim("k1", "owner-2", null);
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.isTakeover()).isTrue();
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().owner()).isEqualTo("owner-2");
		assertThat(takeover.record().recoveryPoint()).isEqualTo("stock-reserved");
		clock().advance(LEASE.plusSeconds(1));
		assertThat(claim("k1", "owner-3", null).record().attempt()).isEqualTo(3);
	}

	@Test
	default void leaseIsLiveUntilItsLastMillisecond() {
		claim("k1", "owner-1", null);
		clock().advance(LEASE.minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		clock().advance(Duration.ofMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@Test
	default void renewalKeepsARunningClaimFromBeingTakenOver() {
		claim("k1", "owner-1", null);
		clock().advance(LEASE.dividedBy(3).multipliedBy(2));
		assertThat(handle("owner-1").renew()).isTrue();
		clock().advance(LEASE.dividedBy(3).multipliedBy(2));
		ClaimResult other = claim("k1", "owner-2", null);
		assertThat(other.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(other.record().leaseUntil()).isAfter(clock().instant());
	}

	@Test
	default void recoveryPointIsStoredAndRenewsTheLease() {
		claim("k1", "owner-1", null);
		clock().advance(LEASE.minusSeconds(1));
		assertThat(handle("owner-1").saveRecoveryPoint("step-1")).isTrue();
		clock().advance(Duration.ofSeconds(5));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(handle("owner-1").saveRecoveryPoint("step-2")).isTrue();
		IdempotencyRecord record = store().find(id("k1")).orElseThrow();
		assertThat(record.recoveryPoint()).isEqualTo("step-2");
		assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
	}

	@Test
	default void aRunRenewedForLongerThanItsRetentionLeavesItsAttemptAndRecoveryPointToTheTakeover() {
		// a retention shorter than the lease, and a run renewed for far longer than both
		Duration lease = Duration.ofSeconds(30);
		Duration retention = Duration.ofSeconds(10);
		assertThat(claim("k1", "owner-1", lease, retention).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		clock().advance(lease.dividedBy(3));
		assertThat(handle("owner-1").saveRecoveryPoint("stock-reserved")).isTrue();
		for (int renewal = 1; renewal <= 6; renewal++) {
			clock().advance(lease.dividedBy(3).multipliedBy(2));
			assertThat(handle("owner-1").renew()).as("renewal %d", renewal).isTrue();
		}
		Instant leaseEnd = clock().instant().plus(lease);
		IdempotencyRecord renewed = store().find(id("k1")).orElseThrow();
		assertThat(renewed.leaseUntil()).isEqualTo(leaseEnd);
		// the run crashes; the next delivery comes after its lease, within the retention
		clock().advance(lease.plus(retention).minusMillis(1));
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
	default void aRunSavingRecoveryPointsForLongerThanItsRetentionLeavesThemToTheTakeover() {
		Duration lease = Duration.ofSeconds(30);
		Duration retention = Duration.ofSeconds(10);
		assertThat(claim("k1", "owner-1", lease, retention).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		for (int step = 1; step <= 6; step++) {
			clock().advance(lease.dividedBy(3).multipliedBy(2));
			assertThat(handle("owner-1").saveRecoveryPoint("step-" + step)).as("step %d", step).isTrue();
		}
		Instant leaseEnd = clock().instant().plus(lease);
		IdempotencyRecord saved = store().find(id("k1")).orElseThrow();
		assertThat(saved.leaseUntil()).isEqualTo(leaseEnd);
		assertThat(saved.recoveryPoint()).isEqualTo("step-6");
		// the run crashes; the next delivery comes after its lease, within the retention
		clock().advance(lease.plus(retention).minusMillis(1));
		ClaimResult takeover = claim("k1", "owner-2", lease, retention);
		assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.isTakeover()).as("a takeover, not a new record").isTrue();
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().recoveryPoint()).isEqualTo("step-6");
		assertThat(saved.expiresAt()).as("kept for the retention past the renewed lease")
			.isAfterOrEqualTo(leaseEnd.plus(retention));
	}

}
