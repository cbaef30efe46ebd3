package io.github.idempotency.store.jdbc;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.BatchClaimSql;
import io.github.idempotency.store.sql.ClaimSql;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * The statements that write a claim's row, as the database's {@link ClaimSql} and
 * {@link BatchClaimSql} say: an insert unless the row exists, reading the row it found,
 * for one record or many, and a takeover of a locked row.
 */
final class JdbcInserts {

	private final JdbcClient jdbc;

	private final JdbcRows rows;

	private final PositionalStatement insert;

	private final PositionalStatement insertInTransaction;

	private final boolean insertInTransactionCounts;

	/** The one-statement claim outside a transaction, where the database has one. */
	private final @Nullable PositionalStatement claim;

	/** The one-statement claim inside the caller's transaction, where the database has one. */
	private final @Nullable PositionalStatement claimInTransaction;

	/** Whether a claim of a key most likely new is the plain insert rather than {@link #claim}. */
	private final boolean insertsNewKeysFirst;

	private final PositionalStatement takeOver;

	JdbcInserts(SqlStatements statements, JdbcClient jdbc, JdbcRows rows) {
		this.jdbc = jdbc;
		this.rows = rows;
		this.insert = new PositionalStatement(statements.insert(), SqlStatements.RECORD_PARAMETERS);
		SqlStatements.InsertSql insertInTransaction = statements.insertInTransaction();
		this.insertInTransaction = new PositionalStatement(insertInTransaction.sql(), SqlStatements.RECORD_PARAMETERS);
		this.insertInTransactionCounts = insertInTransaction.countsInARow();
		ClaimSql claim = statements.claim();
		if (claim instanceof ClaimSql.ReadOrInsert readOrInsert) {
			this.claim = recordStatement(readOrInsert.claim());
			this.claimInTransaction = recordStatement(readOrInsert.claimInTransaction());
			this.insertsNewKeysFirst = true;
		}
		else {
			this.claim = (claim instanceof ClaimSql.UpsertOutsideTransaction upsert) ? recordStatement(upsert.claim())
					: null;
			this.claimInTransaction = null;
			this.insertsNewKeysFirst = false;
		}
		this.takeOver = recordStatement(statements.takeOver());
	}

	/**
	 * What a claim's insert did.
	 * @param inserted whether it inserted the record
	 * @param existing the row it found instead, as {@link JdbcRows#readAfterConflict} reads
	 * it; {@code null} when it inserted, or when the row is gone again
	 */
	record Insertion(boolean inserted, @Nullable IdempotencyRecord existing) {

		static final Insertion INSERTED = new Insertion(true, null);

		/** No row: the statement's snapshot does not show the row the insert found. */
		private static final Insertion NONE = new Insertion(false, null);

	}

	/**
	 * Inserts a record unless its row exists.
	 * @param record the record
	 * @param inTransaction whether the statement runs in the caller's transaction (whose
	 * settings it must leave as they were)
	 * @return whether the row was inserted
	 */
	boolean insert(IdempotencyRecord record, boolean inTransaction) {
		try {
			if (!inTransaction) {
				return this.insert.on(this.jdbc, JdbcRows.values(record)).update() == 1;
			}
			JdbcClient.StatementSpec insert = this.insertInTransaction.on(this.jdbc, JdbcRows.values(record));
			return this.insertInTransactionCounts ? insert.query((rs, row) -> rs.getLong(1)).single() == 1
					: insert.update() == 1;
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	/**
	 * Inserts a record unless its row exists, and reads the row it found: one statement
	 * where the database has a one-statement claim ({@link ClaimSql}; unless the insert
	 * waited for a row committed after the statement began, which its snapshot does not
	 * show: then a second read), otherwise the {@link #insert} and, when it finds the row,
	 * {@link JdbcRows#readAfterConflict}.
	 * @param record the record
	 * @param inTransaction whether the statement runs in the caller's transaction
	 * @param likelyNew whether the key is most likely new: then a database whose claim
	 * reads before it inserts ({@link ClaimSql.ReadOrInsert}) inserts first
	 * @return what the insert did
	 */
	Insertion insertOrRead(IdempotencyRecord record, boolean inTransaction, boolean likelyNew) {
		PositionalStatement claim = (likelyNew && this.insertsNewKeysFirst) ? null
				: inTransaction ? this.claimInTransaction : this.claim;
		if (claim == null) {
			return insert(record, inTransaction) ? Insertion.INSERTED
					: new Insertion(false, this.rows.readAfterConflict(record.id(), inTransaction));
		}
		List<Insertion> found = claim.on(this.jdbc, JdbcRows.values(record))
			.query((rs, row) -> (rs.getString("workflow") != null)
					? new Insertion(rs.getBoolean("claimed"), JdbcRows.toRecord(rs, row)) : Insertion.NONE)
			.list();
		Insertion insertion = found.isEmpty() ? Insertion.NONE : found.get(0);
		if (insertion.inserted()) {
			return Insertion.INSERTED;
		}
		return (insertion.existing() != null) ? insertion
				: new Insertion(false, this.rows.readAfterConflict(record.id(), inTransaction));
	}

	/**
	 * Inserts each record unless its row exists, and reads the rows it found: in one
	 * statement over arrays, or, for keys most likely new, in one insert followed by one
	 * read of the rows it found, only when it found any.
	 * @param sql the database's statements
	 * @param records the new records, no id twice, all {@code IN_PROGRESS} or all
	 * {@code COMPLETED}, attempt 1, created at the same time
	 * @param inTransaction whether the statement runs in the caller's transaction
	 * @param likelyNew whether the keys are most likely new
	 * @return per record what the insert did, {@code null} where it found a row its
	 * snapshot does not show, or one that was gone again when read
	 */
	@Nullable Insertion[] insertOrReadAll(BatchClaimSql.OverArrays sql, List<IdempotencyRecord> records,
			boolean inTransaction, boolean likelyNew) {
		if (likelyNew) {
			return insertFirstAll(records, inTransaction ? sql.insertFirstInTransaction() : sql.insertFirst(),
					sql.readAll());
		}
		Insertion[] found = new Insertion[records.size()];
		new ClaimArrays(records).bind(this.jdbc.sql(inTransaction ? sql.claimAllInTransaction() : sql.claimAll()))
			.param("status", records.get(0).status().name())
			.param("now", records.get(0).createdAt().toEpochMilli())
			.query((rs) -> {
				int position = rs.getInt("position");
				if (rs.wasNull()) {
					// the row of NULLs that answers an empty result inside the caller's transaction
					return;
				}
				// an inserted record is the one given: only a row found is read, its id the claim's
				found[position - 1] = rs.getBoolean("claimed") ? Insertion.INSERTED
						: new Insertion(false, JdbcRows.toRecord(records.get(position - 1).id(), rs));
			});
		return found;
	}

	/**
	 * The insert-first form of {@link #insertOrReadAll}: the insert, then a read of the
	 * rows it found in a statement of its own, only when there are any.
	 */
	private @Nullable Insertion[] insertFirstAll(List<IdempotencyRecord> records, String insert, String read) {
		int size = records.size();
		Map<RecordId, Integer> positions = positions(records);
		Insertion[] found = new Insertion[size];
		ClaimArrays arrays = new ClaimArrays(records);
		int[] inserted = new int[1];
		arrays.bind(this.jdbc.sql(insert))
			.param("status", records.get(0).status().name())
			.param("now", records.get(0).createdAt().toEpochMilli())
			.query((rs) -> {
				String workflow = rs.getString(1);
				if (workflow == null) {
					// the row of NULLs that answers an insert of none inside the caller's transaction
					return;
				}
				found[position(positions, new RecordId(workflow, rs.getString(2)))] = Insertion.INSERTED;
				inserted[0]++;
			});
		if (inserted[0] == size) {
			return found;
		}
		String[] workflows = new String[size - inserted[0]];
		String[] keys = new String[workflows.length];
		for (int i = 0, j = 0; i < size; i++) {
			if (found[i] == null) {
				workflows[j] = arrays.workflows[i];
				keys[j++] = arrays.keys[i];
			}
		}
		// a statement of its own: it reads the rows committed by now, also those the insert waited for
		this.jdbc.sql(read)
			.param("workflows", new SqlArrayValue("text", (Object[]) workflows))
			.param("keys", new SqlArrayValue("text", (Object[]) keys))
			.query((rs) -> {
				IdempotencyRecord existing = JdbcRows.toRecord(rs, 0);
				found[position(positions, existing.id())] = new Insertion(false, existing);
			});
		return found;
	}

	/**
	 * Inserts many records in one statement, all or none ({@link BatchClaimSql.ReadThenInsert}).
	 * @param insertAll the statement for as many rows as {@code records}
	 * @param records the records, no id twice
	 * @return {@code false} when a row existed, and nothing was inserted
	 */
	boolean insertAll(String insertAll, List<IdempotencyRecord> records) {
		try {
			this.jdbc.sql(insertAll).paramSource(JdbcRows.valuesOfAll(records)).update();
			return true;
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	/**
	 * Inserts each record whose row does not exist and reads each row it found, in one
	 * statement outside a transaction ({@link BatchClaimSql.Upsert}).
	 * @param upsertAll the statement for as many rows as {@code records}
	 * @param records the new records, no id twice
	 * @return per record what the statement did, {@code null} where it answered no row
	 */
	@Nullable Insertion[] upsertAll(String upsertAll, List<IdempotencyRecord> records) {
		Map<RecordId, Integer> positions = positions(records);
		Insertion[] found = new Insertion[records.size()];
		this.jdbc.sql(upsertAll).paramSource(JdbcRows.valuesOfAll(records)).query((rs) -> {
			IdempotencyRecord row = JdbcRows.toRecord(rs, 0);
			Integer position = positions.get(row.id());
			if (position != null) {
				// the owner is unique to each claim: the row carries it only when this statement inserted it
				found[position] = row.owner().equals(records.get(position).owner()) ? Insertion.INSERTED
						: new Insertion(false, row);
			}
		});
		return found;
	}

	/**
	 * Overwrites a locked row with a takeover of it.
	 */
	void takeOver(IdempotencyRecord record) {
		this.takeOver.on(this.jdbc, JdbcRows.values(record)).update();
	}

	private static Map<RecordId, Integer> positions(List<IdempotencyRecord> records) {
		Map<RecordId, Integer> positions = new HashMap<>(records.size() * 2);
		for (int i = 0; i < records.size(); i++) {
			positions.put(records.get(i).id(), i);
		}
		return positions;
	}

	/** A statement made positional over {@link SqlStatements#RECORD_PARAMETERS} (bound by {@link JdbcRows#values}). */
	private static PositionalStatement recordStatement(String namedSql) {
		return new PositionalStatement(namedSql, SqlStatements.RECORD_PARAMETERS);
	}

	/**
	 * The array parameters of a batch claim over arrays, one element per record.
	 */
	private static final class ClaimArrays {

		final String[] workflows;

		final String[] keys;

		private final String[] fingerprints;

		private final String[] owners;

		private final Long[] leaseUntils;

		private final Long[] expiresAts;

		ClaimArrays(List<IdempotencyRecord> records) {
			int size = records.size();
			this.workflows = new String[size];
			this.keys = new String[size];
			this.fingerprints = new String[size];
			this.owners = new String[size];
			this.leaseUntils = new Long[size];
			this.expiresAts = new Long[size];
			for (int i = 0; i < size; i++) {
				IdempotencyRecord record = records.get(i);
				this.workflows[i] = record.id().workflow();
				this.keys[i] = record.id().key();
				this.fingerprints[i] = record.fingerprint();
				this.owners[i] = record.owner();
				this.leaseUntils[i] = record.leaseUntil().toEpochMilli();
				this.expiresAts[i] = record.expiresAt().toEpochMilli();
			}
		}

		JdbcClient.StatementSpec bind(JdbcClient.StatementSpec statement) {
			return statement.param("workflows", new SqlArrayValue("text", (Object[]) this.workflows))
				.param("keys", new SqlArrayValue("text", (Object[]) this.keys))
				.param("fingerprints", new SqlArrayValue("text", (Object[]) this.fingerprints))
				.param("owners", new SqlArrayValue("text", (Object[]) this.owners))
				.param("leaseUntils", new SqlArrayValue("int8", (Object[]) this.leaseUntils))
				.param("expiresAts", new SqlArrayValue("int8", (Object[]) this.expiresAts));
		}

	}

	/** The position of a record the statement was given: every row it answers is one of them. */
	private static int position(Map<RecordId, Integer> positions, RecordId id) {
		return Objects.requireNonNull(positions.get(id), "a row of a record not asked for");
	}

}
