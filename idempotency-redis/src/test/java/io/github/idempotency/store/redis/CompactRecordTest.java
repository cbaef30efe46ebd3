package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The compact layout reads back every record exactly, whatever its texts and times.
 */
class CompactRecordTest {

	private static final RecordId ID = new RecordId("orders", "k1");

	private static final Instant AT = Instant.ofEpochMilli(1_790_000_000_123L);

	@Test
	void everyFieldReadsBackExactly() {
		String[] owners = { UUID.randomUUID() + "-0", UUID.randomUUID() + "-123456789012345", "owner-1", "",
				"ABCDEF", "abcdef", "abc", UUID.randomUUID().toString().toUpperCase() + "-1",
				UUID.randomUUID() + "-01", "ключ-🔑" };
		for (String owner : owners) {
			IdempotencyRecord record = new IdempotencyRecord(ID, RecordStatus.FAILED, owner, owner, 70_000,
					AT.minusMillis(5), "", "é€😀\u0000", "java.lang.IllegalStateException", "",
					AT, AT.plusMillis(300_000_000_000L), AT.minusMillis(1));
			assertThat(CompactRecord.decode(ID, CompactRecord.encode(record))).as(owner).isEqualTo(record);
		}
		IdempotencyRecord empty = new IdempotencyRecord(ID, RecordStatus.IN_PROGRESS, null, "o", 1, AT, null, null,
				null, null, AT, AT, AT);
		assertThat(CompactRecord.decode(ID, CompactRecord.encode(empty))).isEqualTo(empty);
	}

	@Test
	void theEnginesOwnersAndFingerprintsAreStoredAsBytes() {
		assertThat(CompactRecord.token(UUID.randomUUID() + "-4711")).hasSize(1 + 16 + 2);
		assertThat(CompactRecord.token("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"))
			.hasSize(1 + 32);
		assertThat(CompactRecord.token("owner-1")).hasSize(1 + 7);
	}

	@Test
	void anUnknownLayoutIsRefused() {
		byte[] value = CompactRecord.encode(new IdempotencyRecord(ID, RecordStatus.COMPLETED, null, "o", 1, AT, null,
				"1", null, null, AT, AT, AT));
		value[0] = 2;
		assertThatIllegalStateException().isThrownBy(() -> CompactRecord.decode(ID, value))
			.withMessageContaining("layout version 2");
	}

}
