package io.github.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * An owner or fingerprint as {@link CompactRecord} stores it and the scripts compare it
 * ({@code token()} in {@code record.lua}): one tag byte and its body, chosen so that two
 * equal texts always give equal bytes. {@code 'x'} and the bytes of a lower-case
 * hexadecimal text of even length (a SHA-256 fingerprint takes 33 bytes instead of 64);
 * {@code 'u'}, 16 bytes and a varint for the engine's owners ({@code <uuid>-<counter>},
 * 20 bytes instead of about 42); {@code 't'} and the UTF-8 bytes for any other text.
 */
final class RecordToken {

	private static final HexFormat HEX = HexFormat.of();

	private RecordToken() {
	}

	/**
	 * The token of an owner or fingerprint, as stored and as the scripts compare it.
	 * @param text the owner or fingerprint
	 * @return its bytes
	 */
	static byte[] of(String text) {
		if (isHex(text)) {
			CompactRecord.Writer out = new CompactRecord.Writer(1 + text.length() / 2);
			out.write('x');
			for (int i = 0; i < text.length(); i += 2) {
				out.write(HexFormat.fromHexDigits(text, i, i + 2));
			}
			return out.written();
		}
		byte[] owner = engineOwner(text);
		if (owner != null) {
			return owner;
		}
		byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
		CompactRecord.Writer out = new CompactRecord.Writer(1 + utf8.length);
		out.write('t');
		out.writeBytes(utf8);
		return out.written();
	}

	private static boolean isHex(String text) {
		if (text.isEmpty() || text.length() % 2 != 0) {
			return false;
		}
		for (int i = 0; i < text.length(); i++) {
			if (lowerHexDigit(text.charAt(i)) < 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * {@code 'u'}, the UUID's 16 bytes and the counter, for {@code <uuid>-<counter>} where
	 * both print back exactly as given (the UUID as {@link UUID#toString} writes it, the
	 * counter as {@link Long#toString}: no sign, no leading zero); else {@code null}. Read
	 * in place: every claim and completion takes the token of an engine's owner.
	 */
	private static byte @Nullable [] engineOwner(String text) {
		int length = text.length();
		if (length < 38 || length > 36 + 1 + 15 || text.charAt(8) != '-' || text.charAt(13) != '-'
				|| text.charAt(18) != '-' || text.charAt(23) != '-' || text.charAt(36) != '-') {
			return null;
		}
		long time = lowerHex(text, 0, 8);
		long middle = lowerHex(text, 9, 13);
		long high = lowerHex(text, 14, 18);
		long clock = lowerHex(text, 19, 23);
		long node = lowerHex(text, 24, 36);
		long counter = decimal(text, 37, length);
		if ((time | middle | high | clock | node | counter) < 0) {
			// one of them is -1: not as UUID.toString and Long.toString write them
			return null;
		}
		CompactRecord.Writer out = new CompactRecord.Writer(1 + 16 + CompactRecord.varintLength(counter));
		out.write('u');
		out.longBytes(time << 32 | middle << 16 | high);
		out.longBytes(clock << 48 | node);
		out.varint(counter);
		return out.written();
	}

	/**
	 * The number that lower-case hexadecimal digits spell from {@code from} to {@code to}
	 * (at most 15 of them), -1 when another character is among them.
	 */
	private static long lowerHex(String text, int from, int to) {
		long value = 0;
		for (int i = from; i < to; i++) {
			int digit = lowerHexDigit(text.charAt(i));
			if (digit < 0) {
				return -1;
			}
			value = (value << 4) | digit;
		}
		return value;
	}

	/**
	 * The number that decimal digits spell from {@code from} to {@code to} (at most 18 of
	 * them) as {@link Long#toString} writes it, -1 for anything else (a sign, a leading
	 * zero, another character).
	 */
	private static long decimal(String text, int from, int to) {
		if (text.charAt(from) == '0' && to - from > 1) {
			return -1;
		}
		long value = 0;
		for (int i = from; i < to; i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return value;
	}

	/** The value of a lower-case hexadecimal digit, -1 for any other character. */
	private static int lowerHexDigit(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
	}

	/**
	 * Reads a token, its length first (a varint), as the record holds it.
	 * @param in the record, at the token
	 * @return the text
	 */
	static String read(ByteBuffer in) {
		int length = (int) CompactRecord.varint(in);
		int end = in.position() + length;
		byte tag = in.get();
		String text = switch (tag) {
			case 'x' -> HEX.formatHex(in.array(), in.position(), end);
			case 'u' -> new UUID(in.getLong(), in.getLong()) + "-" + CompactRecord.varint(in);
			case 't' -> new String(in.array(), in.position(), end - in.position(), StandardCharsets.UTF_8);
			default -> throw new IllegalStateException("Unknown token tag " + tag + " in a Redis record");
		};
		in.position(end);
		return text;
	}

}
