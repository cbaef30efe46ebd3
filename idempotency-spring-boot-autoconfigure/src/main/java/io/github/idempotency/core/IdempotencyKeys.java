package io.github.idempotency.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import org.springframework.util.ClassUtils;

/**
 * Turns the value of a key expression into key text and validates it: {@code String} as
 * is; {@code byte[]}, Kafka {@code Header} and {@code ByteBuffer} as UTF-8; anything else
 * by {@code toString()}.
 */
final class IdempotencyKeys {

	private static final boolean KAFKA_PRESENT = ClassUtils.isPresent("org.apache.kafka.common.header.Header",
			IdempotencyKeys.class.getClassLoader());

	private final int maxLength;

	IdempotencyKeys(int maxLength) {
		this.maxLength = maxLength;
	}

	String toKey(String workflow, @Nullable Object value) {
		String key = toText(value);
		if (key == null || key.isBlank()) {
			throw new MissingIdempotencyKeyException("The idempotency key of '" + workflow + "' is "
					+ ((key == null) ? "missing (null)" : "blank") + "; the operation was not run");
		}
		if (key.length() > this.maxLength) {
			throw new InvalidIdempotencyKeyException("The idempotency key of '" + workflow + "' has " + key.length()
					+ " characters, more than idempotency.max-key-length=" + this.maxLength
					+ "; the operation was not run");
		}
		return key;
	}

	private static @Nullable String toText(@Nullable Object value) {
		if (value == null || value instanceof String) {
			return (String) value;
		}
		if (value instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		if (value instanceof ByteBuffer buffer) {
			return StandardCharsets.UTF_8.decode(buffer.duplicate()).toString();
		}
		if (KAFKA_PRESENT) {
			byte[] header = KafkaHeaderValue.of(value);
			if (header != null) {
				return new String(header, StandardCharsets.UTF_8);
			}
		}
		return value.toString();
	}

	/** Isolates the Kafka type so the class loads without kafka-clients. */
	private static final class KafkaHeaderValue {

		static byte @Nullable [] of(Object value) {
			if (value instanceof org.apache.kafka.common.header.Header header) {
				byte[] bytes = header.value();
				return (bytes != null) ? bytes : new byte[0];
			}
			return null;
		}

	}

}
