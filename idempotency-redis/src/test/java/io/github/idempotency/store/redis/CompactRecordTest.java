package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.HexFormat;
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
		assertThat(RecordToken.of(UUID.randomUUID() + "-4711")).hasSize(1 + 16 + 2);
		assertThat(RecordToken.of("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"))
			.hasSize(1 + 32);
		assertThat(RecordToken.of("owner-1")).hasSize(1 + 7);
	}

	@Test
	void anEnginesOwnerIsItsUuidsBytesAndItsCounter() {
		assertThat(RecordToken.of("123e4567-e89b-12d3-a456-426614174000-300"))
			.isEqualTo(HexFormat.of().parseHex("75" + "123e4567e89b12d3a456426614174000" + "ac02"));
		assertThat(RecordToken.of("123e4567-e89b-12d3-a456-426614174000-999999999999999")).startsWith((byte) 'u');
		assertThat(RecordToken.of("123e4567-e89b-12d3-a456-426614174000-0")).startsWith((byte) 'u');
	}

	@Test
	void anOwnerThatWouldNotPrintBackIsText() {
		String uuid = "123e4567-e89b-12d3-a456-426614174000";
		String[] owners = { uuid + "-+1", uuid + "-01", uuid + "--1", uuid + "-1a", uuid + "-1234567890123456",
				uuid.toUpperCase() + "-1", uuid.replace('a', 'g') + "-1", uuid.replace("-", "0") + "-1",
				"123e4567-e89b-12d3-a45-6426614174000-1" };
		for (String owner : owners) {
			assertThat(RecordToken.of(owner)).as(owner).startsWith((byte) 't');
			IdempotencyRecord record = new IdempotencyRecord(ID, RecordStatus.IN_PROGRESS, null, owner, 1, AT, null,
					null, null, null, AT, AT, AT);
			assertThat(CompactRecord.decode(ID, CompactRecord.encode(record)).owner()).isEqualTo(owner);
		}
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
