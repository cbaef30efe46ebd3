package io.github.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

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
 * {@code -2n - 1} below). A token is a {@link RecordToken}. A finished record with a
 * 60-byte Redis key, an 80-byte response, a fingerprint and an owner of the engine takes
 * 264 bytes ({@code MEMORY USAGE}) where the hash of version 0 took 942.
 * <p>
 * Version 0, the layout before this one, is a hash of one field per column: see
 * {@link LegacyFallbacks}.
 */
final class CompactRecord {

	/** The layout version this class writes. */
	static final int VERSION = 1;

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
		return encode(record, RecordToken.of(record.owner()));
	}

	/**
	 * The value of {@code record}, whose owner's {@link RecordToken} the caller holds already.
	 * @param record the record
	 * @param ownerToken the token of its owner
	 * @return its bytes
	 */
	static byte[] encode(IdempotencyRecord record, byte[] ownerToken) {
		byte[] fingerprint = (record.fingerprint() != null) ? RecordToken.of(record.fingerprint()) : null;
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
		String owner = RecordToken.read(in);
		String fingerprint = ((flags & FINGERPRINT) != 0) ? RecordToken.read(in) : null;
		String recoveryPoint = ((flags & RECOVERY_POINT) != 0) ? text(in) : null;
		String errorType = ((flags & ERROR_TYPE) != 0) ? text(in) : null;
		String errorMessage = ((flags & ERROR_MESSAGE) != 0) ? text(in) : null;
		String response = ((flags & RESPONSE) != 0) ? text(in) : null;
		return new IdempotencyRecord(id, status, fingerprint, owner, attempt,
				Instant.ofEpochMilli(leaseUntil), recoveryPoint, response, errorType, errorMessage,
				Instant.ofEpochMilli(created), Instant.ofEpochMilli(updated), Instant.ofEpochMilli(expires));
	}

	private static String text(ByteBuffer in) {
		int length = (int) varint(in);
		String text = new String(in.array(), in.position(), length, StandardCharsets.UTF_8);
		in.position(in.position() + length);
		return text;
	}

	static long varint(ByteBuffer in) {
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
	static int varintLength(long value) {
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
	static final class Writer {

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
