package io.github.idempotency.kafka;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Kafka header is its value's bytes, which the engine's keys then read as any bytes.
 */
class KafkaHeaderKeyConverterTest {

	private final KafkaHeaderKeyConverter converter = new KafkaHeaderKeyConverter();

	@Test
	void aHeaderIsItsValue() {
		byte[] value = "header-🔑".getBytes(StandardCharsets.UTF_8);
		assertThat(this.converter.toBytes(new RecordHeader("idempotency-key", value))).isEqualTo(value);
	}

	@Test
	void aHeaderWithoutAValueIsTheEmptyKey() {
		assertThat(this.converter.toBytes(new RecordHeader("idempotency-key", null))).isEmpty();
	}

	@Test
	void anythingElseIsLeftToTheOtherConverters() {
		assertThat(this.converter.toBytes("m-1")).isNull();
	}

}
