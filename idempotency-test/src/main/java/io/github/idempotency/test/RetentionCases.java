package io.github.idempotency.test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.IdempotencyStoreContract.CardDeclinedException;
import io.github.idempotency.test.IdempotencyStoreContract.Finish;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Retention: a finished record is kept for the retention after it finished (at most after
 * its lease's end), then the key is free.
 */
interface RetentionCases extends ContractFixture {

	@Test
	default void finishedRecordExpiresAfterItsRetention() {
		Instant leaseEnd = claim("k1", "owner-1", null).record().leaseUntil();
		clock().advance(Duration.ofSeconds(2));
		handle("owner-1").complete("1");
		Instant expiresAt = assertKeptForTheRetention("k1", leaseEnd);
		clock().advance(Duration.between(clock().instant(), expiresAt).minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		clock().advance(Duration.ofMillis(2));
		assertThat(store().find(id("k1"))).isEmpty();
		ClaimResult fresh = claim("k1", "owner-3", null);
		assertThat(fresh.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(fresh.record().attempt()).isEqualTo(1);
	}

	@Test
	default void failedRecordExpiresAfterItsRetention() {
		Instant leaseEnd = claim("k1", "owner-1", null).record().leaseUntil();
		handle("owner-1").fail(new CardDeclinedException(null));
		Instant expiresAt = assertKeptForTheRetention("k1", leaseEnd);
		clock().advance(Duration.between(clock().instant(), expiresAt).minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.FAILED);
		clock().advance(Duration.ofMillis(2));
		assertThat(claim("k1", "owner-2", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
	}

	@ParameterizedTest
	@EnumSource(Finish.class)
	default void recordFinishedAfterItsLeaseIsStillKeptForTheRetention(Finish finish) {
		// the run outlives its lease, nobody takes the key over, and it finishes then
		Instant leaseEnd = claim("k1", "owner-1", null).record().leaseUntil();
		clock().advance(LEASE.plusSeconds(5));
		ClaimHandle handle = handle("owner-1");
		boolean finished = switch (finish) {
			case COMPLETE -> handle.complete("1");
			case COMPLETE_IN_A_BATCH -> store().completeAll(List.of(handle), List.of("1")).get(0);
			case FAIL -> handle.fail(new CardDeclinedException(null));
		};
		assertThat(finished).isTrue();
		Instant expiresAt = assertKeptForTheRetention("k1", leaseEnd);
		clock().advance(Duration.between(clock().instant(), expiresAt).minusMillis(1));
		assertThat(claim("k1", "owner-2", null).outcome())
			.isEqualTo((finish == Finish.FAIL) ? ClaimOutcome.FAILED : ClaimOutcome.DUPLICATE);
	}

}
