package io.github.idempotency.store.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Reads the table's rows, and maps records to the statements' parameters and rows back to
 * records.
 */
final class JdbcRows {

	private final JdbcClient jdbc;

	/**
	 * The read of a record: positional, as the other statements every message takes, and
	 * without the id, which the caller knows.
	 */
	private final PositionalStatement select;

	/** The read of a duplicate (see {@link #readFinished}): as {@link #select}, four columns. */
	private final PositionalStatement selectFinished;

	private final String selectCommitted;

	private final String selectForUpdate;

	JdbcRows(SqlStatements statements, JdbcClient jdbc) {
		this.jdbc = jdbc;
		this.select = new PositionalStatement(statements.select(), SqlStatements.ID_PARAMETERS);
		this.selectFinished = new PositionalStatement(statements.selectFinished(), SqlStatements.ID_PARAMETERS);
		this.selectCommitted = statements.selectCommitted();
		this.selectForUpdate = statements.selectForUpdate();
	}

	@Nullable IdempotencyRecord read(RecordId id) {
		return this.select.on(this.jdbc, id.workflow(), id.key())
			.query((rs, row) -> toRecord(id, rs, 1))
			.optional()
			.orElse(null);
	}

	/**
	 * Reads what answers a duplicate of a finished record, and no more: four columns where
	 * the whole record is twelve.
	 * @return {@code null} when there is no row; the record when it is
	 * {@code COMPLETED}, with its status, fingerprint, response and expiry, and its other
	 * fields empty (owner {@code ""}, attempt 0, no recovery point and no error, the lease
	 * end and the other times at the epoch); otherwise the whole record, read again
	 */
	@Nullable IdempotencyRecord readFinished(RecordId id) {
		IdempotencyRecord finished = this.selectFinished.on(this.jdbc, id.workflow(), id.key())
			.query((rs, row) -> new IdempotencyRecord(id, RecordStatus.valueOf(rs.getString(1)), rs.getString(2), "",
					0, Instant.EPOCH, null, rs.getString(3), null, null, Instant.EPOCH, Instant.EPOCH,
					Instant.ofEpochMilli(rs.getLong(4))))
			.optional()
			.orElse(null);
		// a failure or a claim is answered with fields the four columns do not hold
		return (finished == null || finished.status() == RecordStatus.COMPLETED) ? finished : read(id);
	}

	/**
	 * Reads the row an insert found, as committed now: inside the caller's transaction a
	 * plain read could answer from an older snapshot (MariaDB's REPEATABLE READ).
	 */
	@Nullable IdempotencyRecord readAfterConflict(RecordId id, boolean inTransaction) {
		return inTransaction ? read(this.selectCommitted, id) : read(id);
	}

	/**
	 * Reads a row and locks it, failing at once with a lock error when another transaction
	 * holds it.
	 */
	@Nullable IdempotencyRecord readForUpdate(RecordId id) {
		return read(this.selectForUpdate, id);
	}

	/**
	 * Reads the rows of many records in one statement ({@link SqlStatements#selectAll}).
	 * @param selectAll the statement for as many rows as {@code ids}
	 * @param ids the records
	 * @return the rows found, by record
	 */
	Map<RecordId, IdempotencyRecord> readAll(String selectAll, List<RecordId> ids) {
		MapSqlParameterSource parameters = new MapSqlParameterSource();
		for (int i = 0; i < ids.size(); i++) {
			parameters.addValue("workflow" + i, ids.get(i).workflow()).addValue("key" + i, ids.get(i).key());
		}
		Map<RecordId, IdempotencyRecord> found = new HashMap<>();
		for (IdempotencyRecord record : this.jdbc.sql(selectAll).paramSource(parameters).query(JdbcRows::toRecord).list()) {
			found.put(record.id(), record);
		}
		return found;
	}

	/** Whether the record is completed by the claim of {@code owner}. */
	boolean isCompletedBy(RecordId id, String owner) {
		IdempotencyRecord record = read(id);
		return record != null && record.owner().equals(owner) && record.status() == RecordStatus.COMPLETED;
	}

	private @Nullable IdempotencyRecord read(String sql, RecordId id) {
		return this.jdbc.sql(sql)
			.param("workflow", id.workflow())
			.param("key", id.key())
			.query(JdbcRows::toRecord)
			.optional()
			.orElse(null);
	}

	/** A record's values in the order of {@link SqlStatements#RECORD_PARAMETERS}. */
	static Object[] values(IdempotencyRecord record) {
		return new Object[] { record.id().workflow(), record.id().key(), record.status().name(),
				new SqlParameterValue(Types.VARCHAR, record.fingerprint()), record.owner(), record.attempt(),
				record.leaseUntil().toEpochMilli(), new SqlParameterValue(Types.VARCHAR, record.recoveryPoint()),
				new SqlParameterValue(Types.VARCHAR, record.response()),
				new SqlParameterValue(Types.VARCHAR, record.errorType()),
				new SqlParameterValue(Types.VARCHAR, record.errorMessage()), record.createdAt().toEpochMilli(),
				record.updatedAt().toEpochMilli(), record.expiresAt().toEpochMilli() };
	}

	/**
	 * The parameters of {@link SqlStatements#insertAll}: the {@link #values} of record
	 * {@code i} suffixed with {@code i}.
	 */
	static MapSqlParameterSource valuesOfAll(List<IdempotencyRecord> records) {
		MapSqlParameterSource parameters = new MapSqlParameterSource();
		for (int i = 0; i < records.size(); i++) {
			Object[] values = values(records.get(i));
			for (int j = 0; j < values.length; j++) {
				parameters.addValue(SqlStatements.RECORD_PARAMETERS.get(j) + i, values[j]);
			}
		}
		return parameters;
	}

	/** A row of the {@link SqlStatements#COLUMNS}, among other columns. */
	static IdempotencyRecord toRecord(ResultSet rs, int row) throws SQLException {
		int status = rs.findColumn("status");
		return toRecord(new RecordId(rs.getString(status - 2), rs.getString(status - 1)), rs, status);
	}

	/** A row of the {@link SqlStatements#FIELDS}, among other columns, whose id is known. */
	static IdempotencyRecord toRecord(RecordId id, ResultSet rs) throws SQLException {
		return toRecord(id, rs, rs.findColumn("status"));
	}

	/**
	 * The {@link SqlStatements#FIELDS} of a row, read by position from {@code status}: one
	 * lookup of a column's name, not one per field.
	 */
	private static IdempotencyRecord toRecord(RecordId id, ResultSet rs, int status) throws SQLException {
		return new IdempotencyRecord(id, RecordStatus.valueOf(rs.getString(status)), rs.getString(status + 1),
				rs.getString(status + 2), rs.getInt(status + 3), Instant.ofEpochMilli(rs.getLong(status + 4)),
				rs.getString(status + 5), rs.getString(status + 6), rs.getString(status + 7), rs.getString(status + 8),
				Instant.ofEpochMilli(rs.getLong(status + 9)), Instant.ofEpochMilli(rs.getLong(status + 10)),
				Instant.ofEpochMilli(rs.getLong(status + 11)));
	}

}
