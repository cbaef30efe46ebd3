package io.github.idempotency.store.r2dbc;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.BatchClaimSql;
import io.github.idempotency.store.sql.ClaimSql;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The statements that write a claim's row, as the database's {@link ClaimSql} and
 * {@link BatchClaimSql} say: an insert unless the row exists, reading the row it found,
 * for one record or many, and a takeover of a locked row.
 */
final class R2dbcInserts {

	private final DatabaseClient client;

	private final R2dbcRows rows;

	private final R2dbcStatement insert;

	private final R2dbcStatement insertInTransaction;

	private final boolean insertInTransactionCounts;

	private final @Nullable R2dbcStatement claim;

	private final @Nullable R2dbcStatement claimInTransaction;

	/** Whether a claim of a key most likely new is the plain insert rather than {@link #claim}. */
	private final boolean insertsNewKeysFirst;

	private final R2dbcStatement takeOver;

	R2dbcInserts(SqlStatements statements, DatabaseClient client, R2dbcRows rows) {
		this.client = client;
		this.rows = rows;
		this.insert = new R2dbcStatement(statements.insert());
		SqlStatements.InsertSql insertInTransaction = statements.insertInTransaction();
		this.insertInTransaction = new R2dbcStatement(insertInTransaction.sql());
		this.insertInTransactionCounts = insertInTransaction.countsInARow();
		ClaimSql claim = statements.claim();
		if (claim instanceof ClaimSql.ReadOrInsert readOrInsert) {
			this.claim = new R2dbcStatement(readOrInsert.claim());
			this.claimInTransaction = new R2dbcStatement(readOrInsert.claimInTransaction());
			this.insertsNewKeysFirst = true;
		}
		else {
			this.claim = (claim instanceof ClaimSql.UpsertOutsideTransaction upsert) ? new R2dbcStatement(upsert.claim())
					: null;
			this.claimInTransaction = null;
			this.insertsNewKeysFirst = false;
		}
		this.takeOver = new R2dbcStatement(statements.takeOver());
	}

	/**
	 * What a claim's insert did.
	 * @param inserted whether it inserted the record
	 * @param existing the row it found instead; {@code null} when it inserted, or when the
	 * row is gone again
	 */
	record Insertion(boolean inserted, @Nullable IdempotencyRecord existing) {

		static final Insertion INSERTED = new Insertion(true, null);

		static final Insertion NONE = new Insertion(false, null);

	}

	/**
	 * Inserts a record unless its row exists.
	 * @return whether the row was inserted
	 */
	Mono<Boolean> insert(IdempotencyRecord record, boolean inTransaction) {
		Map<String, @Nullable Object> values = R2dbcRows.values(record);
		Mono<Long> inserted;
		if (!inTransaction) {
			inserted = this.insert.on(this.client, values).fetch().rowsUpdated();
		}
		else if (this.insertInTransactionCounts) {
			inserted = this.insertInTransaction.on(this.client, values)
				.map((row) -> R2dbcRows.number(row, "n"))
				.one();
		}
		else {
			inserted = this.insertInTransaction.on(this.client, values).fetch().rowsUpdated();
		}
		return inserted.map((count) -> count == 1).onErrorResume(DuplicateKeyException.class, (ex) -> Mono.just(false));
	}

	/**
	 * Inserts a record unless its row exists, and reads the row it found: one statement
	 * where the database has a one-statement claim, otherwise the {@link #insert} and, when
	 * it finds the row, {@link R2dbcRows#readAfterConflict}.
	 * @param likelyNew whether the key is most likely new: then a database whose claim reads
	 * before it inserts inserts first
	 */
	Mono<Insertion> insertOrRead(IdempotencyRecord record, boolean inTransaction, boolean likelyNew) {
		R2dbcStatement claim = (likelyNew && this.insertsNewKeysFirst) ? null
				: inTransaction ? this.claimInTransaction : this.claim;
		if (claim == null) {
			return insert(record, inTransaction).flatMap((inserted) -> inserted ? Mono.just(Insertion.INSERTED)
					: afterConflict(record.id(), inTransaction));
		}
		return claim.on(this.client, R2dbcRows.values(record))
			.map((row) -> (R2dbcRows.text(row, "workflow") != null)
					? new Insertion(R2dbcRows.flag(row, "claimed"), R2dbcRows.toRecord(row)) : Insertion.NONE)
			.all()
			.next()
			.defaultIfEmpty(Insertion.NONE)
			.flatMap((insertion) -> insertion.inserted() ? Mono.just(Insertion.INSERTED)
					: (insertion.existing() != null) ? Mono.just(insertion) : afterConflict(record.id(), inTransaction));
	}

	private Mono<Insertion> afterConflict(RecordId id, boolean inTransaction) {
		return this.rows.readAfterConflict(id, inTransaction)
			.map((existing) -> new Insertion(false, existing))
			.defaultIfEmpty(Insertion.NONE);
	}

	/**
	 * Inserts each record unless its row exists, and reads the rows it found, in one
	 * statement over arrays ({@link BatchClaimSql.OverArrays}).
	 * @return per record what the statement did, {@code null} where it found a row its
	 * snapshot does not show
	 */
	Mono<@Nullable Insertion[]> insertOrReadAll(BatchClaimSql.OverArrays sql, List<IdempotencyRecord> records,
			boolean inTransaction) {
		int size = records.size();
		Map<String, Object> parameters = new HashMap<>();
		String[] workflows = new String[size];
		String[] keys = new String[size];
		String[] fingerprints = new String[size];
		String[] owners = new String[size];
		Long[] leaseUntils = new Long[size];
		Long[] expiresAts = new Long[size];
		for (int i = 0; i < size; i++) {
			IdempotencyRecord record = records.get(i);
			workflows[i] = record.id().workflow();
			keys[i] = record.id().key();
			fingerprints[i] = record.fingerprint();
			owners[i] = record.owner();
			leaseUntils[i] = record.leaseUntil().toEpochMilli();
			expiresAts[i] = record.expiresAt().toEpochMilli();
		}
		parameters.put("workflows", workflows);
		parameters.put("keys", keys);
		parameters.put("fingerprints", fingerprints);
		parameters.put("owners", owners);
		parameters.put("leaseUntils", leaseUntils);
		parameters.put("expiresAts", expiresAts);
		parameters.put("status", records.get(0).status().name());
		parameters.put("now", records.get(0).createdAt().toEpochMilli());
		@Nullable Insertion[] found = new Insertion[size];
		return new R2dbcStatement(inTransaction ? sql.claimAllInTransaction() : sql.claimAll())
			.on(this.client, parameters)
			.map((row) -> {
				long position = R2dbcRows.number(row, "position");
				if (position > 0) {
					// a row of NULLs answers an empty result inside the caller's transaction
					int i = (int) position - 1;
					found[i] = R2dbcRows.flag(row, "claimed") ? Insertion.INSERTED
							: new Insertion(false, R2dbcRows.toRecord(records.get(i).id(), row));
				}
				return position;
			})
			.all()
			.then(Mono.fromSupplier(() -> found));
	}

	/**
	 * Inserts many records in one statement, all or none ({@link BatchClaimSql.ReadThenInsert}).
	 * @return {@code false} when a row existed, and nothing was inserted
	 */
	Mono<Boolean> insertAll(String insertAll, List<IdempotencyRecord> records) {
		return new R2dbcStatement(insertAll).on(this.client, valuesOfAll(records))
			.fetch()
			.rowsUpdated()
			.thenReturn(true)
			.onErrorResume(DuplicateKeyException.class, (ex) -> Mono.just(false));
	}

	/**
	 * Inserts each record whose row does not exist and reads each row it found, in one
	 * statement outside a transaction ({@link BatchClaimSql.Upsert}).
	 * @return per record what the statement did, {@code null} where it answered no row
	 */
	Mono<@Nullable Insertion[]> upsertAll(String upsertAll, List<IdempotencyRecord> records) {
		Map<RecordId, Integer> positions = new HashMap<>();
		for (int i = 0; i < records.size(); i++) {
			positions.put(records.get(i).id(), i);
		}
		@Nullable Insertion[] found = new Insertion[records.size()];
		return new R2dbcStatement(upsertAll).on(this.client, valuesOfAll(records))
			.map((Readable row) -> R2dbcRows.toRecord(row))
			.all()
			.doOnNext((row) -> {
				Integer position = positions.get(row.id());
				if (position != null) {
					// the owner is unique to each claim: the row carries it only when this statement inserted it
					found[position] = row.owner().equals(records.get(position).owner()) ? Insertion.INSERTED
							: new Insertion(false, row);
				}
			})
			.then(Mono.fromSupplier(() -> found));
	}

	/** Overwrites a locked row with a takeover of it. */
	Mono<Long> takeOver(IdempotencyRecord record) {
		return this.takeOver.on(this.client, R2dbcRows.values(record)).fetch().rowsUpdated();
	}

	private static Map<String, @Nullable Object> valuesOfAll(List<IdempotencyRecord> records) {
		Map<String, @Nullable Object> values = new HashMap<>();
		for (int i = 0; i < records.size(); i++) {
			R2dbcRows.values(records.get(i), String.valueOf(i), values);
		}
		return values;
	}

}
