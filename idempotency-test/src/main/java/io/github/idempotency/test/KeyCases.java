package io.github.idempotency.test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.junit.jupiter.api.Test;

import static io.github.idempotency.test.IdempotencyStoreContract.LEASE;
import static io.github.idempotency.test.IdempotencyStoreContract.RETENTION;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys and what is stored: workflows apart, a workflow and a key never mistaken for
 * another pair, any key and response stored exactly, every field read back, a manual delete.
 */
interface KeyCases extends ContractFixture {

	@Test
	default void workflowsAreIsolated() {
		String other = workflow() + "-other";
		assertThat(claim("k1", "owner-1", null).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(store().claim(request(new RecordId(other, "k1"), "owner-2", null)).outcome())
			.isEqualTo(ClaimOutcome.ACQUIRED);
		handle("owner-1").complete("1");
		assertThat(store().claim(request(new RecordId(other, "k1"), "owner-3", null)).outcome())
			.isEqualTo(ClaimOutcome.IN_PROGRESS);
	}

	@Test
	default void workflowAndKeyNeverRunTogether() {
		RecordId first = new RecordId(workflow() + ":a", "b");
		RecordId second = new RecordId(workflow(), "a:b");
		RecordId third = new RecordId(workflow() + ":a:b", "c");
		RecordId fourth = new RecordId(workflow() + ":a", "b:c");
		for (RecordId id : List.of(first, second, third, fourth)) {
			assertThat(store().claim(request(id, "owner-" + id, null)).outcome()).as(id.toString())
				.isEqualTo(ClaimOutcome.ACQUIRED);
		}
	}

	@Test
	default void findReadsEveryFieldAndDeleteRemovesWhateverTheOwner() {
		Instant claimedAt = clock().instant();
		claim("k1", "owner-1", "fp-1");
		clock().advance(Duration.ofSeconds(2));
		handle("owner-1").complete("{\"ok\":true}");
		IdempotencyRecord record = store().find(id("k1")).orElseThrow();
		assertThat(record.id()).isEqualTo(id("k1"));
		assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record.fingerprint()).isEqualTo("fp-1");
		assertThat(record.owner()).isEqualTo("owner-1");
		assertThat(record.attempt()).isEqualTo(1);
		assertThat(record.response()).isEqualTo("{\"ok\":true}");
		assertThat(record.createdAt()).isEqualTo(claimedAt);
		assertThat(record.updatedAt()).isEqualTo(clock().instant());
		assertThat(record.expiresAt()).isBetween(clock().instant().plus(RETENTION),
				claimedAt.plus(LEASE).plus(RETENTION));
		assertThat(store().delete(id("k1"))).isTrue();
		assertThat(store().delete(id("k1"))).isFalse();
		assertThat(store().find(id("k1"))).isEmpty();
	}

	@Test
	default void keysAndResponsesAreStoredExactly() {
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
	default void keysThatDifferOnlyInTrailingSpacesCaseOrNormalizationAreDistinct() {
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

}
