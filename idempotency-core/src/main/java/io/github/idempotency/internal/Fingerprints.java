package io.github.idempotency.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * SHA-256 fingerprints of payloads: text and bytes as they are, anything else as JSON with
 * properties and map entries in a stable order.
 */
final class Fingerprints {

	private final JsonMapper canonicalMapper;

	Fingerprints(JsonMapper jsonMapper) {
		this.canonicalMapper = jsonMapper.rebuild()
			.enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
			.enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
			.build();
	}

	String of(@Nullable Object payload) {
		byte[] bytes;
		if (payload instanceof String text) {
			bytes = text.getBytes(StandardCharsets.UTF_8);
		}
		else if (payload instanceof byte[] raw) {
			bytes = raw;
		}
		else {
			bytes = this.canonicalMapper.writeValueAsBytes(payload);
		}
		return HexFormat.of().formatHex(sha256().digest(bytes));
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

}
