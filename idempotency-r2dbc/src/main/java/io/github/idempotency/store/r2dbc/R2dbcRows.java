package io.github.idempotency.store.r2dbc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * Reads the table's rows, and maps records to the statements' parameters and rows back to
 * records.
 */
final class R2dbcRows {

	private final DatabaseClient client;

	private final R2dbcStatement select;

	private final R2dbcStatement selectFinished;

	private final R2dbcStatement selectCommitted;

	private final R2dbcStatement selectForUpdate;

	R2dbcRows(SqlStatements statements, DatabaseClient client) {
		this.client = client;
		this.select = new R2dbcStatement(statements.select());
		this.selectFinished = new R2dbcStatement(statements.selectFinished());
		this.selectCommitted = new R2dbcStatement(statements.selectCommitted());
		this.selectForUpdate = new R2dbcStatement(statements.selectForUpdate());
	}

	/** The record, or empty. */
	Mono<IdempotencyRecord> read(RecordId id) {
		return this.select.on(this.client, ids(id)).map((row) -> toRecord(id, row)).one();
	}

	/**
	 * Reads what answers a duplicate of a finished record, and no more (as the jdbc store):
	 * a {@code COMPLETED} record with its status, fingerprint, response and expiry, its
	 * other fields empty; any other record whole, read again; empty when there is no row.
	 */
	Mono<IdempotencyRecord> readFinished(RecordId id) {
		return this.selectFinished.on(this.client, ids(id))
			.map((row) -> new IdempotencyRecord(id, RecordStatus.valueOf(requiredText(row, "status")), text(row, "fingerprint"),
					"", 0, Instant.EPOCH, null, text(row, "response"), null, null, Instant.EPOCH, Instant.EPOCH,
					Instant.ofEpochMilli(number(row, "expires_at"))))
			.one()
			.flatMap((finished) -> (finished.status() == RecordStatus.COMPLETED) ? Mono.just(finished) : read(id));
	}

	/**
	 * Reads the row an insert found, as committed now: inside the caller's transaction a
	 * plain read could answer from an older snapshot (MariaDB's REPEATABLE READ).
	 */
	Mono<IdempotencyRecord> readAfterConflict(RecordId id, boolean inTransaction) {
		return inTransaction ? this.selectCommitted.on(this.client, ids(id)).map((Readable row) -> R2dbcRows.toRecord(row)).one() : read(id);
	}

	/** Reads a row and locks it, failing at once with a lock error when another transaction holds it. */
	Mono<IdempotencyRecord> readForUpdate(RecordId id) {
		return this.selectForUpdate.on(this.client, ids(id)).map((Readable row) -> R2dbcRows.toRecord(row)).one();
	}

	/**
	 * Reads the rows of many records in one statement ({@link SqlStatements#selectAll}).
	 * @return the rows found, by record
	 */
	Mono<Map<RecordId, IdempotencyRecord>> readAll(String selectAll, List<RecordId> ids) {
		Map<String, Object> parameters = new HashMap<>();
		for (int i = 0; i < ids.size(); i++) {
			parameters.put("workflow" + i, ids.get(i).workflow());
			parameters.put("key" + i, ids.get(i).key());
		}
		return new R2dbcStatement(selectAll).on(this.client, parameters)
			.map((Readable row) -> R2dbcRows.toRecord(row))
			.all()
			.collectMap(IdempotencyRecord::id);
	}

	static Map<String, Object> ids(RecordId id) {
		return Map.of("workflow", id.workflow(), "key", id.key());
	}

	/**
	 * A record's values by the names of {@link SqlStatements#RECORD_PARAMETERS}, each
	 * suffixed with {@code suffix}; a {@code null} value is a {@code NULL} of text.
	 */
	static Map<String, @Nullable Object> values(IdempotencyRecord record, String suffix, Map<String, @Nullable Object> into) {
		List<String> names = SqlStatements.RECORD_PARAMETERS;
		Object[] values = { record.id().workflow(), record.id().key(), record.status().name(), record.fingerprint(),
				record.owner(), record.attempt(), record.leaseUntil().toEpochMilli(), record.recoveryPoint(),
				record.response(), record.errorType(), record.errorMessage(), record.createdAt().toEpochMilli(),
				record.updatedAt().toEpochMilli(), record.expiresAt().toEpochMilli() };
		for (int i = 0; i < values.length; i++) {
			into.put(names.get(i) + suffix, values[i]);
		}
		return into;
	}

	/** A record's values by the names of {@link SqlStatements#RECORD_PARAMETERS}. */
	static Map<String, @Nullable Object> values(IdempotencyRecord record) {
		return values(record, "", new HashMap<>());
	}

	/** A row of the {@link SqlStatements#COLUMNS}, among other columns. */
	static IdempotencyRecord toRecord(Readable row) {
		return toRecord(new RecordId(requiredText(row, "workflow"), requiredText(row, "idempotency_key")), row);
	}

	/** A row of the {@link SqlStatements#FIELDS}, among other columns, whose id is known. */
	static IdempotencyRecord toRecord(RecordId id, Readable row) {
		return new IdempotencyRecord(id, RecordStatus.valueOf(requiredText(row, "status")), text(row, "fingerprint"),
				requiredText(row, "owner"), (int) number(row, "attempt"), Instant.ofEpochMilli(number(row, "lease_until")),
				text(row, "recovery_point"), text(row, "response"), text(row, "error_type"), text(row, "error_message"),
				Instant.ofEpochMilli(number(row, "created_at")), Instant.ofEpochMilli(number(row, "updated_at")),
				Instant.ofEpochMilli(number(row, "expires_at")));
	}

	/** A column of text, also one of bytes (MariaDB's binary keys), in UTF-8. */
	static @Nullable String text(Readable row, String column) {
		Object value = row.get(column);
		if (value instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		if (value instanceof ByteBuffer buffer) {
			return StandardCharsets.UTF_8.decode(buffer.duplicate()).toString();
		}
		return (value != null) ? value.toString() : null;
	}

	static String requiredText(Readable row, String column) {
		String text = text(row, column);
		if (text == null) {
			throw new IllegalStateException("No " + column + " in a row of the idempotency table");
		}
		return text;
	}

	/** A column of a whole number, {@code 0} when {@code NULL}. */
	static long number(Readable row, String column) {
		Object value = row.get(column);
		return (value instanceof Number number) ? number.longValue() : 0;
	}

	/** A column of a truth value: a boolean, or a number that is not 0 (MariaDB). */
	static boolean flag(Readable row, String column) {
		Object value = row.get(column);
		return (value instanceof Boolean bool) ? bool : (value instanceof Number number) && number.longValue() != 0;
	}

}
