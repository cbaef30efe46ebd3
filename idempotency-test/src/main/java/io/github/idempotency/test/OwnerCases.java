package io.github.idempotency.test;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.IdempotencyStoreContract.CardDeclinedException;
import org.junit.jupiter.api.Test;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static io.github.idempotency.test.IdempotencyStoreContract.RETRYABLE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing: a record changes only through the claim that holds it, and keeps the owner that
 * finished it; a stale, finished or released claim changes nothing.
 */
interface OwnerCases extends ContractFixture {

	@Test
	default void aCompletedRecordKeepsTheOwnerThatCompletedIt() {
		// the engine tells a completion whose answer was lost from a takeover by it
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").complete("1")).isTrue();
		assertThat(handle("owner-1").complete("1")).as("asked again").isFalse();
		IdempotencyRecord record = store().find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.owner()).isEqualTo("owner-1");
	}

	@Test
	default void aFailedRecordKeepsTheOwnerThatFailedIt() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").fail(new CardDeclinedException("declined: 51"))).isTrue();
		assertThat(handle("owner-1").fail(new CardDeclinedException("declined: 51"))).as("asked again").isFalse();
		IdempotencyRecord record = store().find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record.owner()).isEqualTo("owner-1");
	}

	@Test
	default void staleOwnerCanNeitherCompleteNorFailNorReleaseNorRenew() {
		claim("k1", "owner-1", null);
		clock().advance(LEASE.plusSeconds(1));
		claim("k1", "owner-2", null);
		assertThat(handle("owner-1").complete("\"late\"")).isFalse();
		assertThat(handle("owner-1").fail(new IllegalStateException("late"))).isFalse();
		assertThat(handle("owner-1").release(RETRYABLE)).isFalse();
		assertThat(handle("owner-1").renew()).isFalse();
		assertThat(handle("owner-1").saveRecoveryPoint("late")).isFalse();
		IdempotencyRecord record = store().find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(record.owner()).isEqualTo("owner-2");
		assertThat(record.recoveryPoint()).isNull();
		assertThat(handle("owner-2").complete("\"on time\"")).isTrue();
		assertThat(claim("k1", "owner-3", null).record().response()).isEqualTo("\"on time\"");
	}

	@Test
	default void finishedRecordsCannotBeChangedByTheirOwner() {
		claim("k1", "owner-1", null);
		handle("owner-1").complete("\"first\"");
		assertThat(handle("owner-1").complete("\"second\"")).isFalse();
		assertThat(handle("owner-1").fail(new IllegalStateException("no"))).isFalse();
		assertThat(handle("owner-1").release(RETRYABLE)).isFalse();
		assertThat(handle("owner-1").renew()).isFalse();
		IdempotencyRecord record = store().find(id("k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.response()).isEqualTo("\"first\"");
	}

	@Test
	default void releasedClaimCanNeitherCompleteNorRenewAndItsKeyIsFree() {
		claim("k1", "owner-1", null);
		assertThat(handle("owner-1").release(RETRYABLE)).isTrue();
		assertThat(handle("owner-1").complete("1")).isFalse();
		assertThat(handle("owner-1").renew()).isFalse();
		assertThat(handle("owner-1").release(RETRYABLE)).isFalse();
		assertThat(store().find(id("k1"))).isEmpty();
		claim("k1", "owner-2", null);
		assertThat(handle("owner-1").complete("1")).isFalse();
		assertThat(store().find(id("k1")).orElseThrow().owner()).isEqualTo("owner-2");
	}

}
