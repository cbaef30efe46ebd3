package io.github.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HexFormat;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.util.Assert;

/**
 * The layout of a record as one Redis string value (layout version 1), written and read
 * here and by the scripts ({@code record.lua}, the same layout in Lua):
 * <pre>
 * byte     1               the layout version
 * byte     flags           bits 0-1 the status (0 in progress, 1 completed, 2 failed);
 *                          bits 2-6 which of the five optional fields below are present
 * varint   attempt
 * varint   created_at      epoch milliseconds
 * zigzag   updated_at  - created_at
 * zigzag   expires_at  - updated_at
 * zigzag   lease_until - created_at
 * token    owner           varint length, then that many bytes (see below)
 * token    fingerprint     when bit 2 is set
 * text     recovery_point  when bit 3 is set: varint length, then that many UTF-8 bytes
 * text     error_type      when bit 4 is set
 * text     error_message   when bit 5 is set
 * text     response        when bit 6 is set
 * </pre>
 * A varint is an unsigned LEB128 number (seven bits a byte, the low group first); a
 * zigzag is a signed number as a varint ({@code 2n} for {@code n >= 0},
 * {@code -2n - 1} below). A token is one tag byte and its body, chosen so that two
 * equal texts always give equal bytes (the scripts compare owners and fingerprints as
 * bytes): {@code 'x'} and the bytes of a lower-case hexadecimal text of even length (a
 * SHA-256 fingerprint takes 33 bytes instead of 64); {@code 'u'}, 16 bytes and a varint
 * for the engine's owners ({@code <uuid>-<counter>}, 20 bytes instead of about 42);
 * {@code 't'} and the UTF-8 bytes for any other text. A finished record with a 60-byte
 * Redis key, an 80-byte response, a fingerprint and an owner of the engine takes 264
 * bytes ({@code MEMORY USAGE}) where the hash of version 0 took 942.
 * <p>
 * Version 0, the layout before this one, is a hash of one field per column; the scripts
 * read it and write version 1 in its place on the next change (see {@code record.lua}),
 * and {@link RedisIdempotencyStore#find} reads it as it is.
 */
final class CompactRecord {

	/** The layout version this class writes. */
	static final int VERSION = 1;

	private static final HexFormat HEX = HexFormat.of();

	private static final int FINGERPRINT = 1 << 2;

	private static final int RECOVERY_POINT = 1 << 3;

	private static final int ERROR_TYPE = 1 << 4;

	private static final int ERROR_MESSAGE = 1 << 5;

	private static final int RESPONSE = 1 << 6;

	private CompactRecord() {
	}

	/**
	 * The value of {@code record}.
	 * @param record the record
	 * @return its bytes
	 */
	static byte[] encode(IdempotencyRecord record) {
		return encode(record, token(record.owner()));
	}

	/**
	 * The value of {@code record}, whose owner's {@link #token} the caller holds already.
	 * @param record the record
	 * @param ownerToken the token of its owner
	 * @return its bytes
	 */
	static byte[] encode(IdempotencyRecord record, byte[] ownerToken) {
		byte[] fingerprint = (record.fingerprint() != null) ? token(record.fingerprint()) : null;
		byte[] recoveryPoint = utf8(record.recoveryPoint());
		byte[] errorType = utf8(record.errorType());
		byte[] errorMessage = utf8(record.errorMessage());
		byte[] response = utf8(record.response());
		long created = record.createdAt().toEpochMilli();
		long updated = record.updatedAt().toEpochMilli();
		long updatedDelta = zigzag(updated - created);
		long expiresDelta = zigzag(record.expiresAt().toEpochMilli() - updated);
		long leaseDelta = zigzag(record.leaseUntil().toEpochMilli() - created);
		Writer out = new Writer(2 + varintLength(record.attempt()) + varintLength(created) + varintLength(updatedDelta)
				+ varintLength(expiresDelta) + varintLength(leaseDelta) + fieldLength(ownerToken)
				+ fieldLength(fingerprint) + fieldLength(recoveryPoint) + fieldLength(errorType)
				+ fieldLength(errorMessage) + fieldLength(response));
		out.write(VERSION);
		out.write(statusBits(record.status()) | present(fingerprint, FINGERPRINT)
				| present(recoveryPoint, RECOVERY_POINT) | present(errorType, ERROR_TYPE)
				| present(errorMessage, ERROR_MESSAGE) | present(response, RESPONSE));
		out.varint(record.attempt());
		out.varint(created);
		out.varint(updatedDelta);
		out.varint(expiresDelta);
		out.varint(leaseDelta);
		out.field(ownerToken);
		out.field(fingerprint);
		out.field(recoveryPoint);
		out.field(errorType);
		out.field(errorMessage);
		out.field(response);
		return out.written();
	}

	/**
	 * Reads a value of this layout.
	 * @param id the record's id (not stored in the value)
	 * @param value the bytes
	 * @return the record
	 * @throws IllegalStateException for a layout version this class does not know
	 */
	static IdempotencyRecord decode(RecordId id, byte[] value) {
		ByteBuffer in = ByteBuffer.wrap(value);
		int version = in.get();
		if (version != VERSION) {
			throw new IllegalStateException("Redis record " + id + " has layout version " + version
					+ ", which this version of the store cannot read (it reads version " + VERSION + ")");
		}
		int flags = in.get();
		RecordStatus status = status(flags & 3);
		int attempt = (int) varint(in);
		long created = varint(in);
		long updated = created + unzigzag(varint(in));
		long expires = updated + unzigzag(varint(in));
		long leaseUntil = created + unzigzag(varint(in));
		String owner = untoken(in);
		String fingerprint = ((flags & FINGERPRINT) != 0) ? untoken(in) : null;
		String recoveryPoint = ((flags & RECOVERY_POINT) != 0) ? text(in) : null;
		String errorType = ((flags & ERROR_TYPE) != 0) ? text(in) : null;
		String errorMessage = ((flags & ERROR_MESSAGE) != 0) ? text(in) : null;
		String response = ((flags & RESPONSE) != 0) ? text(in) : null;
		return new IdempotencyRecord(id, status, fingerprint, owner, attempt,
				Instant.ofEpochMilli(leaseUntil), recoveryPoint, response, errorType, errorMessage,
				Instant.ofEpochMilli(created), Instant.ofEpochMilli(updated), Instant.ofEpochMilli(expires));
	}

	/**
	 * The token of an owner or fingerprint, as stored and as the scripts compare it.
	 * @param text the owner or fingerprint
	 * @return its bytes
	 */
	static byte[] token(String text) {
		if (isHex(text)) {
			Writer out = new Writer(1 + text.length() / 2);
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
		Writer out = new Writer(1 + utf8.length);
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
		Writer out = new Writer(1 + 16 + varintLength(counter));
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

	private static String untoken(ByteBuffer in) {
		int length = (int) varint(in);
		int end = in.position() + length;
		byte tag = in.get();
		String text = switch (tag) {
			case 'x' -> HEX.formatHex(in.array(), in.position(), end);
			case 'u' -> new UUID(in.getLong(), in.getLong()) + "-" + varint(in);
			case 't' -> new String(in.array(), in.position(), end - in.position(), StandardCharsets.UTF_8);
			default -> throw new IllegalStateException("Unknown token tag " + tag + " in a Redis record");
		};
		in.position(end);
		return text;
	}

	private static String text(ByteBuffer in) {
		int length = (int) varint(in);
		String text = new String(in.array(), in.position(), length, StandardCharsets.UTF_8);
		in.position(in.position() + length);
		return text;
	}

	private static long varint(ByteBuffer in) {
		long value = 0;
		int shift = 0;
		while (true) {
			int b = in.get() & 0xFF;
			value |= (long) (b & 0x7F) << shift;
			if (b < 0x80) {
				return value;
			}
			shift += 7;
		}
	}

	/** How many bytes {@code value} takes as a varint (read as unsigned). */
	private static int varintLength(long value) {
		int length = 1;
		for (long v = value >>> 7; v != 0; v >>>= 7) {
			length++;
		}
		return length;
	}

	/** A signed number as the unsigned one a varint holds. */
	private static long zigzag(long value) {
		return (value >= 0) ? (value << 1) : ((-value << 1) - 1);
	}

	private static long unzigzag(long n) {
		return ((n & 1) == 0) ? (n >>> 1) : -((n + 1) >>> 1);
	}

	private static byte @Nullable [] utf8(@Nullable String text) {
		return (text != null) ? text.getBytes(StandardCharsets.UTF_8) : null;
	}

	/** The bytes of an optional field: its length as a varint, then itself. */
	private static int fieldLength(byte @Nullable [] field) {
		return (field != null) ? varintLength(field.length) + field.length : 0;
	}

	private static int present(byte @Nullable [] field, int bit) {
		return (field != null) ? bit : 0;
	}

	private static int statusBits(RecordStatus status) {
		switch (status) {
			case IN_PROGRESS:
				return 0;
			case COMPLETED:
				return 1;
			default:
				return 2;
		}
	}

	private static RecordStatus status(int bits) {
		switch (bits) {
			case 0:
				return RecordStatus.IN_PROGRESS;
			case 1:
				return RecordStatus.COMPLETED;
			case 2:
				return RecordStatus.FAILED;
			default:
				throw new IllegalStateException("Unknown status " + bits + " in a Redis record");
		}
	}

	/** A byte array of a known size, written with the layout's number encoding. */
	private static final class Writer {

		private final byte[] bytes;

		private int position;

		Writer(int size) {
			this.bytes = new byte[size];
		}

		void write(int b) {
			this.bytes[this.position++] = (byte) b;
		}

		void writeBytes(byte[] b) {
			System.arraycopy(b, 0, this.bytes, this.position, b.length);
			this.position += b.length;
		}

		void varint(long value) {
			long v = value;
			while ((v & ~0x7FL) != 0) {
				write((int) ((v & 0x7F) | 0x80));
				v >>>= 7;
			}
			write((int) v);
		}

		void longBytes(long value) {
			for (int shift = 56; shift >= 0; shift -= 8) {
				write((int) (value >>> shift));
			}
		}

		/** An optional field: nothing when absent, else its length and its bytes. */
		void field(byte @Nullable [] field) {
			if (field != null) {
				varint(field.length);
				writeBytes(field);
			}
		}

		/** The bytes, all written. */
		byte[] written() {
			Assert.state(this.position == this.bytes.length, "A Redis record was sized wrongly");
			return this.bytes;
		}

	}

}
