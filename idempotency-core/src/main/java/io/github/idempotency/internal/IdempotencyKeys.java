package io.github.idempotency.internal;

import io.github.idempotency.IdempotencyKeyConverter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;

/**
 * Turns the value of a key expression into key text and validates it. The mapping is
 * injective: two different values never become the same key, and a value read from bytes
 * meets the same value given as text.
 * <ul>
 * <li>text ({@code String}, or anything else by {@code toString()}) as is;</li>
 * <li>bytes ({@code byte[]}, {@code ByteBuffer}, what an {@link IdempotencyKeyConverter}
 * answers, such as a Kafka {@code Header}'s value) that are valid UTF-8 as the text they decode to (strictly: no replacement characters);</li>
 * <li>other bytes (raw UUIDs, hashes) as U+FFFD (the replacement character) followed by
 * their unpadded base64url form: U+FFFD and {@code _w} for the single byte
 * {@code 0xFF};</li>
 * <li>text that itself begins with U+FFFD gets a second one in front, so that it can
 * never read as the binary form of some bytes.</li>
 * </ul>
 * Text with an unpaired surrogate is rejected as an invalid key: it has no UTF-8 form, so
 * the stores could not keep it apart from other such keys.
 * Keys from the three forms cannot meet: only the binary form starts with one U+FFFD and
 * then a base64url character, only escaped text with two, and other text with none.
 */
final class IdempotencyKeys {

	/** The first character of a key made from bytes that are not UTF-8. */
	private static final char MARK = '\uFFFD';

	private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

	private final int maxLength;

	private final List<IdempotencyKeyConverter> converters;

	IdempotencyKeys(int maxLength) {
		this(maxLength, List.of());
	}

	IdempotencyKeys(int maxLength, List<IdempotencyKeyConverter> converters) {
		this.maxLength = maxLength;
		this.converters = List.copyOf(converters);
	}

	String toKey(String workflow, @Nullable Object value) {
		if (value instanceof RejectedKey rejected) {
			throw new InvalidIdempotencyKeyException("The idempotency key of '" + workflow + "' " + rejected.reason()
					+ "; the operation was not run");
		}
		String key = toText(convert(value));
		if (key == null || key.isBlank()) {
			throw new MissingIdempotencyKeyException("The idempotency key of '" + workflow + "' is "
					+ ((key == null) ? "missing (null)" : "blank") + "; the operation was not run");
		}
		if (key.length() > this.maxLength) {
			throw new InvalidIdempotencyKeyException("The idempotency key of '" + workflow + "' has " + key.length()
					+ " characters, more than idempotency.max-key-length=" + this.maxLength
					+ "; the operation was not run");
		}
		int unpaired = unpairedSurrogate(key);
		if (unpaired >= 0) {
			throw new InvalidIdempotencyKeyException("The idempotency key of '" + workflow + "' is not valid Unicode "
					+ "text: an unpaired surrogate (U+" + Integer.toHexString(key.charAt(unpaired)).toUpperCase()
					+ ") at index " + unpaired + ", which UTF-8 stores cannot tell from other keys; the operation "
					+ "was not run");
		}
		return key;
	}

	/**
	 * The index of the first surrogate that is not half of a pair, -1 when there is none:
	 * such text does not survive UTF-8 (PostgreSQL and Redis would store two such keys as
	 * one).
	 */
	private static int unpairedSurrogate(String text) {
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				return i;
			}
		}
		return -1;
	}

	static @Nullable String toText(@Nullable Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof byte[] bytes) {
			return fromBytes(bytes);
		}
		if (value instanceof ByteBuffer buffer) {
			ByteBuffer remaining = buffer.duplicate();
			byte[] bytes = new byte[remaining.remaining()];
			remaining.get(bytes);
			return fromBytes(bytes);
		}
		return fromText(value.toString());
	}

	private @Nullable Object convert(@Nullable Object value) {
		if (value == null || value instanceof String || value instanceof byte[] || value instanceof ByteBuffer) {
			return value;
		}
		for (IdempotencyKeyConverter converter : this.converters) {
			byte[] bytes = converter.toBytes(value);
			if (bytes != null) {
				return bytes;
			}
		}
		return value;
	}

	private static String fromText(String text) {
		return (!text.isEmpty() && text.charAt(0) == MARK) ? MARK + text : text;
	}

	private static String fromBytes(byte[] bytes) {
		CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
			.onMalformedInput(CodingErrorAction.REPORT)
			.onUnmappableCharacter(CodingErrorAction.REPORT);
		try {
			return fromText(decoder.decode(ByteBuffer.wrap(bytes)).toString());
		}
		catch (CharacterCodingException ex) {
			return MARK + BASE64URL.encodeToString(bytes);
		}
	}

}
