package io.github.idempotency.store.redis;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HexFormat;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;

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
		Writer out = new Writer(48 + length(record.response()) + length(record.errorMessage()));
		out.write(VERSION);
		out.write(statusBits(record.status()) | present(record.fingerprint(), FINGERPRINT)
				| present(record.recoveryPoint(), RECOVERY_POINT) | present(record.errorType(), ERROR_TYPE)
				| present(record.errorMessage(), ERROR_MESSAGE) | present(record.response(), RESPONSE));
		out.varint(record.attempt());
		long created = record.createdAt().toEpochMilli();
		long updated = record.updatedAt().toEpochMilli();
		out.varint(created);
		out.zigzag(updated - created);
		out.zigzag(record.expiresAt().toEpochMilli() - updated);
		out.zigzag(record.leaseUntil().toEpochMilli() - created);
		out.token(token(record.owner()));
		if (record.fingerprint() != null) {
			out.token(token(record.fingerprint()));
		}
		out.text(record.recoveryPoint());
		out.text(record.errorType());
		out.text(record.errorMessage());
		out.text(record.response());
		return out.toByteArray();
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
		long updated = created + zigzag(in);
		long expires = updated + zigzag(in);
		long leaseUntil = created + zigzag(in);
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
			byte[] bytes = HEX.parseHex(text);
			return tagged('x', bytes, bytes.length);
		}
		byte[] owner = engineOwner(text);
		if (owner != null) {
			return owner;
		}
		byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
		return tagged('t', utf8, utf8.length);
	}

	private static byte[] tagged(char tag, byte[] body, int length) {
		byte[] token = new byte[length + 1];
		token[0] = (byte) tag;
		System.arraycopy(body, 0, token, 1, length);
		return token;
	}

	private static boolean isHex(String text) {
		if (text.isEmpty() || text.length() % 2 != 0) {
			return false;
		}
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	/**
	 * {@code 'u'}, the UUID's 16 bytes and the counter, for {@code <uuid>-<counter>} where
	 * both print back exactly as given; else {@code null}.
	 */
	private static byte @Nullable [] engineOwner(String text) {
		if (text.length() < 38 || text.length() > 36 + 1 + 15 || text.charAt(36) != '-') {
			return null;
		}
		String uuidText = text.substring(0, 36);
		String counterText = text.substring(37);
		UUID uuid;
		long counter;
		try {
			uuid = UUID.fromString(uuidText);
			counter = Long.parseLong(counterText);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
		if (counter < 0 || !uuid.toString().equals(uuidText) || !Long.toString(counter).equals(counterText)) {
			return null;
		}
		Writer out = new Writer(26);
		out.write('u');
		ByteBuffer bits = ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits())
			.putLong(uuid.getLeastSignificantBits());
		out.writeBytes(bits.array());
		out.varint(counter);
		return out.toByteArray();
	}

	private static String untoken(ByteBuffer in) {
		int length = (int) varint(in);
		byte tag = in.get();
		byte[] body = new byte[length - 1];
		in.get(body);
		switch (tag) {
			case 'x':
				return HEX.formatHex(body);
			case 'u':
				ByteBuffer bits = ByteBuffer.wrap(body);
				UUID uuid = new UUID(bits.getLong(), bits.getLong());
				return uuid + "-" + varint(bits);
			case 't':
				return new String(body, StandardCharsets.UTF_8);
			default:
				throw new IllegalStateException("Unknown token tag " + tag + " in a Redis record");
		}
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

	private static long zigzag(ByteBuffer in) {
		long n = varint(in);
		return ((n & 1) == 0) ? (n >>> 1) : -((n + 1) >>> 1);
	}

	private static int length(@Nullable String text) {
		return (text != null) ? text.length() : 0;
	}

	private static int present(@Nullable String field, int bit) {
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

	/** A growing byte array with the layout's number and text encodings. */
	private static final class Writer extends ByteArrayOutputStream {

		Writer(int size) {
			super(size);
		}

		void varint(long value) {
			long v = value;
			while ((v & ~0x7FL) != 0) {
				write((int) ((v & 0x7F) | 0x80));
				v >>>= 7;
			}
			write((int) v);
		}

		void zigzag(long value) {
			varint((value >= 0) ? (value << 1) : ((-value << 1) - 1));
		}

		void token(byte[] token) {
			varint(token.length);
			writeBytes(token);
		}

		void text(@Nullable String text) {
			if (text != null) {
				byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
				varint(utf8.length);
				writeBytes(utf8);
			}
		}

	}

}
