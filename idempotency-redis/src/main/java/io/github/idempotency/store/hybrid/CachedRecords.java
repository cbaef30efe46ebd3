package io.github.idempotency.store.hybrid;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;

/**
 * A finished record as the fields of its cache hash, and back. Times are epoch
 * milliseconds; absent values are absent fields.
 */
final class CachedRecords {

	private CachedRecords() {
	}

	static List<String> toFields(IdempotencyRecord record) {
		List<String> fields = new ArrayList<>(24);
		add(fields, "status", record.status().name());
		add(fields, "fingerprint", record.fingerprint());
		add(fields, "owner", record.owner());
		add(fields, "attempt", String.valueOf(record.attempt()));
		add(fields, "lease_until", millis(record.leaseUntil()));
		add(fields, "recovery_point", record.recoveryPoint());
		add(fields, "response", record.response());
		add(fields, "error_type", record.errorType());
		add(fields, "error_message", record.errorMessage());
		add(fields, "created_at", millis(record.createdAt()));
		add(fields, "updated_at", millis(record.updatedAt()));
		add(fields, "expires_at", millis(record.expiresAt()));
		return fields;
	}

	static IdempotencyRecord fromFields(RecordId id, Map<String, String> fields) {
		return new IdempotencyRecord(id, RecordStatus.valueOf(required(fields, "status")), fields.get("fingerprint"),
				required(fields, "owner"), Integer.parseInt(fields.get("attempt")), instant(fields, "lease_until"),
				fields.get("recovery_point"), fields.get("response"), fields.get("error_type"),
				fields.get("error_message"), instant(fields, "created_at"), instant(fields, "updated_at"),
				instant(fields, "expires_at"));
	}

	/** A field every stored record has. */
	private static String required(Map<String, String> fields, String name) {
		return Objects.requireNonNull(fields.get(name), () -> "the stored record has no " + name);
	}

	private static void add(List<String> fields, String name, @Nullable String value) {
		if (value != null) {
			fields.add(name);
			fields.add(value);
		}
	}

	private static String millis(Instant instant) {
		return String.valueOf(instant.toEpochMilli());
	}

	private static Instant instant(Map<String, String> fields, String name) {
		return Instant.ofEpochMilli(Long.parseLong(fields.get(name)));
	}

}
