package io.github.idempotency.kafka;

import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyKeyConverter;

/**
 * Makes a Kafka {@link Header} a key: its value's bytes (a header without a value is an
 * empty, hence missing, key). Registered by the Kafka auto-configuration, so that
 * {@code key = "#record.headers().lastHeader('idempotency-key')"} works as well as the
 * header's {@code byte[]} value.
 */
public final class KafkaHeaderKeyConverter implements IdempotencyKeyConverter {

	@Override
	public byte @Nullable [] toBytes(Object value) {
		if (value instanceof Header header) {
			byte[] bytes = header.value();
			return (bytes != null) ? bytes : new byte[0];
		}
		return null;
	}

}
