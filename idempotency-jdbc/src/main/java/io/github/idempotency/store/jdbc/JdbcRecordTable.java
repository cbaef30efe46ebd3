package io.github.idempotency.store.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.namedparam.SqlParameterSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.Assert;

/**
 * The statements of the store's table, each one round trip on whatever connection
 * {@link JdbcClient} finds (the caller's transaction, or its own auto-committed one).
 * Times are epoch milliseconds from the store's clock, never from the database.
 */
final class JdbcRecordTable {

	/**
	 * Which rows a claim's step may change: a claim held by its lease only while its record
	 * is still {@code IN_PROGRESS}; a claim held by the caller's transaction its row
	 * whatever its status (no other run can change it before the transaction ends).
	 */
	enum Fence {

		LEASE(" AND status = 'IN_PROGRESS'"), TRANSACTION("");

		private final String condition;

		Fence(String condition) {
			this.condition = condition;
		}

		String condition() {
			return this.condition;
		}

	}

	/** The names of {@link JdbcDialect#PARAMETERS}, in its order. */
	private static final List<String> RECORD_PARAMETERS = List.of("workflow", "key", "status", "fingerprint", "owner",
			"attempt", "leaseUntil", "recoveryPoint", "response", "errorType", "errorMessage", "createdAt", "updatedAt",
			"expiresAt");

	private static final List<String> ID_PARAMETERS = List.of("workflow", "key");

	private static final List<String> COMPLETION_PARAMETERS = List.of("workflow", "key", "owner", "response", "now",
			"expiresAt");

	/**
	 * Moves {@code expires_at} to {@code :expiresAt} unless it is later already: a step never
	 * shortens how long a record is kept. A record finished within its lease so keeps the
	 * claim's {@code expires_at} (the lease's end + retention), and finishing it changes no
	 * indexed column: PostgreSQL updates the row on its page (a heap-only tuple, no index
	 * entry written), InnoDB leaves the {@code expires_at} index alone.
	 */
	private static final String KEPT_UNTIL = "expires_at = CASE WHEN expires_at < :expiresAt THEN :expiresAt "
			+ "ELSE expires_at END";

	/** The most claims one statement of {@link #completeCounted} completes. */
	private static final int MAX_COUNTED_COMPLETIONS = 1000;

	/** The most characters of responses one statement of {@link #completeCounted} carries. */
	private static final int MAX_COUNTED_CHARACTERS = 262_144;

	/** For the claim's statements, whose lock waits each dialect bounds itself. */
	private final JdbcClient jdbc;

	/**
	 * For every other statement: bounded by a query timeout of the lock timeout, so that a
	 * row another transaction holds never blocks a step longer (MariaDB's own default
	 * wait is 50 s). The PostgreSQL driver keeps that timeout on a timer thread, at a cost
	 * of about 14 µs of CPU per statement (docs/benchmarks.md), so a completion that is a
	 * transaction of its own bounds its lock wait itself there instead (see
	 * {@link #boundsItsOwnLockWait}).
	 */
	private final JdbcClient bounded;

	/** For JDBC batches, bounded like {@link #bounded}. */
	private final NamedParameterJdbcTemplate batches;

	private final JdbcDialect dialect;

	private final String table;

	private final Duration lockTimeout;

	private final Clock clock;

	/**
	 * The read of a record: positional, as the other statements every message takes, and
	 * without the id, which the caller knows.
	 */
	private final PositionalStatement select;

	/** The read of a duplicate (see {@link #readFinished}): as {@link #select}, four columns. */
	private final PositionalStatement selectFinished;

	private final PositionalStatement insert;

	private final PositionalStatement insertInTransaction;

	private final @Nullable PositionalStatement claim;

	private final @Nullable PositionalStatement claimInTransaction;

	private final PositionalStatement takeOver;

	private final PositionalStatement completeLeased;

	private final PositionalStatement completeInTransaction;

	/** {@link #completeLeased} bounding its own lock wait, where the dialect can. */
	private final @Nullable PositionalStatement completeLeasedSelfBounded;

	private final @Nullable String claimAll;

	private final @Nullable String claimAllInTransaction;

	private final @Nullable String insertAllFirst;

	private final @Nullable String insertAllFirstInTransaction;

	private final @Nullable String readAllOf;

	/** {@link JdbcDialect#completeAll} for claims held by their leases, if the dialect has it. */
	private final @Nullable String completeAllLeased;

	/** {@link JdbcDialect#completeAll} for claims held by the caller's transaction, if the dialect has it. */
	private final @Nullable String completeAllInTransaction;

	/**
	 * {@link #completeAllLeased} bounding its own lock waits, where the dialect can (as
	 * {@link #completeLeasedSelfBounded}).
	 */
	private final @Nullable String completeAllLeasedSelfBounded;

	private final DataSource dataSource;

	private final boolean upsertsAll;

	private final boolean countsCompletions;

	JdbcRecordTable(DataSource dataSource, JdbcDialect dialect, String table, Duration lockTimeout, Clock clock) {
		this.jdbc = JdbcClient.create(dataSource);
		JdbcTemplate bounded = new JdbcTemplate(dataSource);
		bounded.setQueryTimeout((int) Math.max(1, (lockTimeout.toMillis() + 999) / 1000));
		this.bounded = JdbcClient.create(bounded);
		this.batches = new NamedParameterJdbcTemplate(bounded);
		this.dialect = dialect;
		this.table = table;
		this.lockTimeout = lockTimeout;
		this.clock = clock;
		this.select = new PositionalStatement("SELECT " + JdbcDialect.FIELDS + " FROM " + table
				+ " WHERE workflow = :workflow AND idempotency_key = :key", ID_PARAMETERS);
		this.selectFinished = new PositionalStatement("SELECT status, fingerprint, response, expires_at FROM " + table
				+ " WHERE workflow = :workflow AND idempotency_key = :key", ID_PARAMETERS);
		this.insert = new PositionalStatement(dialect.insert(table, lockTimeout), RECORD_PARAMETERS);
		this.insertInTransaction = new PositionalStatement(dialect.insertInTransaction(table, lockTimeout),
				RECORD_PARAMETERS);
		this.claim = recordStatement(dialect.claim(table, lockTimeout));
		this.claimInTransaction = recordStatement(dialect.claimInTransaction(table, lockTimeout));
		this.takeOver = new PositionalStatement("UPDATE " + table + " SET status = :status, fingerprint = :fingerprint, "
				+ "owner = :owner, attempt = :attempt, lease_until = :leaseUntil, recovery_point = :recoveryPoint, "
				+ "response = NULL, error_type = NULL, error_message = NULL, created_at = :createdAt, "
				+ "updated_at = :updatedAt, expires_at = :expiresAt WHERE workflow = :workflow AND idempotency_key = :key",
				RECORD_PARAMETERS);
		this.completeLeased = new PositionalStatement(completion(Fence.LEASE), COMPLETION_PARAMETERS);
		this.completeInTransaction = new PositionalStatement(completion(Fence.TRANSACTION), COMPLETION_PARAMETERS);
		this.claimAll = dialect.claimAll(table, lockTimeout);
		this.claimAllInTransaction = dialect.claimAllInTransaction(table, lockTimeout);
		this.insertAllFirst = dialect.insertAllFirst(table, lockTimeout);
		this.insertAllFirstInTransaction = dialect.insertAllFirstInTransaction(table, lockTimeout);
		this.readAllOf = dialect.readAllOf(table);
		this.completeAllLeased = dialect.completeAll(table, Fence.LEASE.condition());
		this.completeAllInTransaction = dialect.completeAll(table, Fence.TRANSACTION.condition());
		String bound = dialect.boundsItsLockWaits(lockTimeout);
		this.completeLeasedSelfBounded = bound.isEmpty() ? null
				: new PositionalStatement(completion(Fence.LEASE) + bound, COMPLETION_PARAMETERS);
		this.completeAllLeasedSelfBounded = bound.isEmpty() ? null
				: dialect.completeAll(table, Fence.LEASE.condition() + bound);
		this.dataSource = dataSource;
		this.upsertsAll = dialect.upsertAll(table, lockTimeout, 1) != null;
		this.countsCompletions = dialect.completeCounted(table, "", 1) != null;
	}

	/**
	 * What a claim's insert did.
	 * @param inserted whether it inserted the record
	 * @param existing the row it found instead, as {@link #readAfterConflict} reads it;
	 * {@code null} when it inserted, or when the row is gone again
	 */
	record Insertion(boolean inserted, @Nullable IdempotencyRecord existing) {

		static final Insertion INSERTED = new Insertion(true, null);

		/** No row: the statement's snapshot does not show the row the insert found. */
		private static final Insertion NONE = new Insertion(false, null);

	}

	/**
	 * The array parameters of a batch claim (see {@link JdbcDialect#claimAll}), one element
	 * per record.
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

	/**
	 * The same table reached through another data source (a connection of its own).
	 * @param dataSource the data source
	 * @return the table on it
	 */
	JdbcRecordTable on(DataSource dataSource) {
		return new JdbcRecordTable(dataSource, this.dialect, this.table, this.lockTimeout, this.clock);
	}

	Instant now() {
		return this.clock.instant();
	}

	JdbcDialect dialect() {
		return this.dialect;
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
			PositionalStatement insert = inTransaction ? this.insertInTransaction : this.insert;
			return this.dialect.inserted(insert.on(this.jdbc, values(record)), inTransaction);
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	/**
	 * Inserts a record unless its row exists, and reads the row it found: one statement
	 * where the dialect has a {@link JdbcDialect#claim one-statement claim} (unless the
	 * insert waited for a row committed after the statement began, which its snapshot does
	 * not show: then a second read), otherwise the {@link #insert} and, when it finds the
	 * row, {@link #readAfterConflict}.
	 * @param record the record
	 * @param inTransaction whether the statement runs in the caller's transaction
	 * @param likelyNew whether the key is most likely new: then a dialect that
	 * {@link JdbcDialect#insertsNewKeysFirst inserts new keys first} does so
	 * @return what the insert did
	 */
	Insertion insertOrRead(IdempotencyRecord record, boolean inTransaction, boolean likelyNew) {
		PositionalStatement claim = (likelyNew && this.dialect.insertsNewKeysFirst()) ? null
				: inTransaction ? this.claimInTransaction : this.claim;
		if (claim == null) {
			return insert(record, inTransaction) ? Insertion.INSERTED
					: new Insertion(false, readAfterConflict(record.id(), inTransaction));
		}
		List<Insertion> found = claim.on(this.jdbc, values(record))
			.query((rs, row) -> (rs.getString("workflow") != null)
					? new Insertion(rs.getBoolean("claimed"), toRecord(rs, row)) : Insertion.NONE)
			.list();
		Insertion insertion = found.isEmpty() ? Insertion.NONE : found.get(0);
		if (insertion.inserted()) {
			return Insertion.INSERTED;
		}
		return (insertion.existing() != null) ? insertion
				: new Insertion(false, readAfterConflict(record.id(), inTransaction));
	}

	/**
	 * Whether {@link #insertOrReadAll} claims many records in one statement.
	 */
	boolean claimsAllAtOnce() {
		return this.claimAll != null;
	}

	/**
	 * Whether {@link #completeAll} completes many claims in one statement, rather than in
	 * a JDBC batch of single completions (which outside a transaction commits each).
	 */
	boolean completesAllAtOnce() {
		return this.completeAllLeased != null;
	}

	/**
	 * Inserts each record unless its row exists, and reads the rows it found: in one
	 * statement (see {@link JdbcDialect#claimAll}), or, for keys most likely new where the
	 * dialect has {@link JdbcDialect#insertAllFirst}, in one insert followed by one read of
	 * the rows it found, only when it found any.
	 * @param records the new records, no id twice, all {@code IN_PROGRESS} or all
	 * {@code COMPLETED}, attempt 1, created at the same time
	 * @param inTransaction whether the statement runs in the caller's transaction
	 * @param likelyNew whether the keys are most likely new, as for {@link #insertOrRead}
	 * @return per record what the insert did, {@code null} where it found a row its
	 * snapshot does not show, or one that was gone again when read
	 */
	@Nullable Insertion[] insertOrReadAll(List<IdempotencyRecord> records, boolean inTransaction,
			boolean likelyNew) {
		String insertFirst = inTransaction ? this.insertAllFirstInTransaction : this.insertAllFirst;
		if (likelyNew && insertFirst != null && this.readAllOf != null) {
			return insertFirstAll(records, insertFirst, this.readAllOf);
		}
		String claims = inTransaction ? this.claimAllInTransaction : this.claimAll;
		Assert.state(claims != null, "No batch claim on " + this.dialect);
		Insertion[] found = new Insertion[records.size()];
		new ClaimArrays(records).bind(this.jdbc.sql(claims))
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
						: new Insertion(false, toRecord(records.get(position - 1).id(), rs));
			});
		return found;
	}

	/**
	 * The insert-first form of {@link #insertOrReadAll}: the insert, then a read of the
	 * rows it found in a statement of its own, only when there are any.
	 */
	private @Nullable Insertion[] insertFirstAll(List<IdempotencyRecord> records, String insert, String read) {
		int size = records.size();
		Map<RecordId, Integer> positions = new HashMap<>(size * 2);
		for (int i = 0; i < size; i++) {
			positions.put(records.get(i).id(), i);
		}
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
				IdempotencyRecord existing = toRecord(rs, 0);
				found[position(positions, existing.id())] = new Insertion(false, existing);
			});
		return found;
	}

	/**
	 * Reads the rows of many records in one statement (where the dialect has no
	 * {@link #claimsAllAtOnce one-statement claim}).
	 * @param ids the records
	 * @return the rows found, by record
	 */
	Map<RecordId, IdempotencyRecord> readAll(List<RecordId> ids) {
		MapSqlParameterSource parameters = new MapSqlParameterSource();
		for (int i = 0; i < ids.size(); i++) {
			parameters.addValue("workflow" + i, ids.get(i).workflow()).addValue("key" + i, ids.get(i).key());
		}
		Map<RecordId, IdempotencyRecord> found = new HashMap<>();
		for (IdempotencyRecord record : this.jdbc.sql(this.dialect.selectAll(this.table, ids.size()))
			.paramSource(parameters)
			.query(JdbcRecordTable::toRecord)
			.list()) {
			found.put(record.id(), record);
		}
		return found;
	}

	/**
	 * Inserts many records in one statement, all or none (where the dialect has no
	 * {@link #claimsAllAtOnce one-statement claim}).
	 * @param records the records, no id twice
	 * @return {@code false} when a row existed, and nothing was inserted
	 */
	boolean insertAll(List<IdempotencyRecord> records) {
		try {
			this.jdbc.sql(this.dialect.insertAll(this.table, this.lockTimeout, records.size()))
				.paramSource(parametersOfAll(records))
				.update();
			return true;
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	/**
	 * Whether {@link #completeCounted} completes these claims in one statement: where the
	 * dialect has one that counts them ({@link JdbcDialect#completeCounted}), for at most
	 * {@value #MAX_COUNTED_COMPLETIONS} claims whose responses hold at most
	 * {@value #MAX_COUNTED_CHARACTERS} characters (at most 2 MiB, escaped: within the
	 * largest packet MariaDB takes by default, 16 MiB, and older servers' 4 MiB).
	 * @param responses the responses of the claims
	 */
	boolean countsCompletionsOf(List<@Nullable String> responses) {
		if (!this.countsCompletions || responses.size() > MAX_COUNTED_COMPLETIONS) {
			return false;
		}
		long characters = 0;
		for (String response : responses) {
			characters += (response != null) ? response.length() : 0;
		}
		return characters <= MAX_COUNTED_CHARACTERS;
	}

	/**
	 * Completes claims in one statement ({@link JdbcDialect#completeCounted}; only where
	 * {@link #countsCompletionsOf}).
	 * @return whether it completed every claim: when not, it may have completed some, and
	 * its transaction is to be rolled back
	 */
	boolean completeCounted(List<RecordId> ids, List<String> owners, List<@Nullable String> responses,
			List<Duration> retentions, Fence fence) {
		int rows = ids.size();
		String statement = this.dialect.completeCounted(this.table, fence.condition(), rows);
		Assert.state(statement != null, "No counted completion on " + this.dialect);
		Instant now = now();
		MapSqlParameterSource parameters = new MapSqlParameterSource("now", now.toEpochMilli());
		for (int i = 0; i < rows; i++) {
			parameters.addValue("workflow" + i, ids.get(i).workflow())
				.addValue("key" + i, ids.get(i).key())
				.addValue("owner" + i, owners.get(i))
				.addValue("response" + i, responses.get(i), Types.VARCHAR)
				.addValue("expiresAt" + i, now.plus(retentions.get(i)).toEpochMilli());
		}
		return this.bounded.sql(statement).paramSource(parameters).update() == rows;
	}

	/**
	 * Whether {@link #upsertAll} claims many records in one statement outside a
	 * transaction.
	 */
	boolean upsertsAll() {
		return this.upsertsAll;
	}

	/**
	 * Inserts each record whose row does not exist and reads each row it found, in one
	 * statement outside a transaction ({@link JdbcDialect#upsertAll}; only where
	 * {@link #upsertsAll}).
	 * @param records the new records, no id twice
	 * @return per record what the statement did, {@code null} where it answered no row
	 */
	@Nullable Insertion[] upsertAll(List<IdempotencyRecord> records) {
		String upsert = this.dialect.upsertAll(this.table, this.lockTimeout, records.size());
		Assert.state(upsert != null, "No batch upsert on " + this.dialect);
		Map<RecordId, Integer> positions = new HashMap<>(records.size() * 2);
		for (int i = 0; i < records.size(); i++) {
			positions.put(records.get(i).id(), i);
		}
		Insertion[] found = new Insertion[records.size()];
		this.jdbc.sql(upsert).paramSource(parametersOfAll(records)).query((rs) -> {
			IdempotencyRecord row = toRecord(rs, 0);
			Integer position = positions.get(row.id());
			if (position != null) {
				// the owner is unique to each claim: the row carries it only when this statement inserted it
				found[position] = row.owner().equals(records.get(position).owner()) ? Insertion.INSERTED
						: new Insertion(false, row);
			}
		});
		return found;
	}

	/** The parameters of {@link JdbcDialect#insertAll}: those of record {@code i} suffixed with {@code i}. */
	private static MapSqlParameterSource parametersOfAll(List<IdempotencyRecord> records) {
		MapSqlParameterSource parameters = new MapSqlParameterSource();
		for (int i = 0; i < records.size(); i++) {
			Object[] values = values(records.get(i));
			for (int j = 0; j < values.length; j++) {
				parameters.addValue(RECORD_PARAMETERS.get(j) + i, values[j]);
			}
		}
		return parameters;
	}

	@Nullable IdempotencyRecord read(RecordId id) {
		return this.select.on(this.jdbc, id.workflow(), id.key())
			.query((rs, row) -> toRecord(id, rs, 1))
			.optional()
			.orElse(null);
	}

	/**
	 * Reads what answers a duplicate of a finished record, and no more: four columns where
	 * the whole record is twelve, about a tenth less of a busy server's time per duplicate
	 * (docs/benchmarks.md).
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
		return inTransaction ? read(this.dialect.selectCommitted(this.table), id) : read(id);
	}

	/**
	 * Reads a row and locks it, failing at once with a lock error when another transaction
	 * holds it.
	 */
	@Nullable IdempotencyRecord readForUpdate(RecordId id) {
		return read(this.dialect.selectForUpdate(this.table), id);
	}

	/**
	 * Overwrites a locked row with a takeover of it.
	 */
	void takeOver(IdempotencyRecord record) {
		this.takeOver.on(this.jdbc, values(record)).update();
	}

	boolean complete(RecordId id, String owner, @Nullable String response, Duration retention, Fence fence) {
		Instant now = now();
		boolean selfBounded = boundsItsOwnLockWait(fence);
		PositionalStatement completion = (selfBounded && this.completeLeasedSelfBounded != null)
				? this.completeLeasedSelfBounded
				: (fence == Fence.LEASE) ? this.completeLeased : this.completeInTransaction;
		return completion.on(selfBounded ? this.jdbc : this.bounded, id.workflow(), id.key(), owner,
				new SqlParameterValue(Types.VARCHAR, response), now.toEpochMilli(), now.plus(retention).toEpochMilli())
			.update() == 1;
	}

	/**
	 * Completes many claims in one round trip: one statement where the dialect has one
	 * ({@link JdbcDialect#completeAll}), otherwise a JDBC batch of {@link #complete}.
	 * @param ids the records
	 * @param owners their claims' owners
	 * @param responses the response of each, {@code null} for {@code void}
	 * @param retentions how long each is kept
	 * @param fence which rows the claims may change
	 * @return for each record whether it was completed
	 */
	boolean[] completeAll(List<RecordId> ids, List<String> owners, List<@Nullable String> responses,
			List<Duration> retentions, Fence fence) {
		Instant now = now();
		int size = ids.size();
		boolean[] completed = new boolean[size];
		boolean selfBounded = boundsItsOwnLockWait(fence);
		String statement = selfBounded ? this.completeAllLeasedSelfBounded
				: (fence == Fence.LEASE) ? this.completeAllLeased : this.completeAllInTransaction;
		if (statement != null) {
			String[] workflows = new String[size];
			String[] keys = new String[size];
			Long[] expiresAts = new Long[size];
			for (int i = 0; i < size; i++) {
				workflows[i] = ids.get(i).workflow();
				keys[i] = ids.get(i).key();
				expiresAts[i] = now.plus(retentions.get(i)).toEpochMilli();
			}
			(selfBounded ? this.jdbc : this.bounded).sql(statement)
				.param("workflows", new SqlArrayValue("text", (Object[]) workflows))
				.param("keys", new SqlArrayValue("text", (Object[]) keys))
				// String[] (not Object[]): the driver sends those in its binary form, unescaped
				.param("owners", new SqlArrayValue("text", (Object[]) owners.toArray(new String[0])))
				.param("responses", new SqlArrayValue("text", (Object[]) responses.toArray(new String[0])))
				.param("expiresAts", new SqlArrayValue("int8", (Object[]) expiresAts))
				.param("now", now.toEpochMilli())
				.query((rs) -> {
					completed[rs.getInt(1) - 1] = true;
				});
			return completed;
		}
		SqlParameterSource[] batch = new SqlParameterSource[size];
		for (int i = 0; i < size; i++) {
			batch[i] = new MapSqlParameterSource(owned(ids.get(i), owners.get(i)))
				.addValue("response", responses.get(i), Types.VARCHAR)
				.addValue("now", now.toEpochMilli())
				.addValue("expiresAt", now.plus(retentions.get(i)).toEpochMilli());
		}
		int[] counts = this.batches.batchUpdate(completion(fence), batch);
		for (int i = 0; i < size; i++) {
			// a driver that sends the batch as one bulk statement may not count each row
			completed[i] = (counts[i] == Statement.SUCCESS_NO_INFO) ? isCompletedBy(ids.get(i), owners.get(i))
					: counts[i] == 1;
		}
		return completed;
	}

	/**
	 * Whether a completion under {@code fence} bounds its own lock wait: a claim held by its
	 * lease, on a dialect that can, in a statement that is a transaction of its own, so that
	 * the setting it makes for itself ends with it. That is when no connection of this data
	 * source is bound to the thread: no transaction of the caller's, nor of anybody's on
	 * whose thread a result completes.
	 */
	/** The position of a record the statement was given: every row it answers is one of them. */
	private static int position(Map<RecordId, Integer> positions, RecordId id) {
		return Objects.requireNonNull(positions.get(id), "a row of a record not asked for");
	}

	private boolean boundsItsOwnLockWait(Fence fence) {
		return fence == Fence.LEASE && this.completeLeasedSelfBounded != null
				&& TransactionSynchronizationManager.getResource(this.dataSource) == null;
	}

	private boolean isCompletedBy(RecordId id, String owner) {
		IdempotencyRecord record = read(id);
		return record != null && record.owner().equals(owner) && record.status() == RecordStatus.COMPLETED;
	}

	private String completion(Fence fence) {
		return "UPDATE " + this.table + " SET status = 'COMPLETED', response = :response, "
				+ "error_type = NULL, error_message = NULL, updated_at = :now, " + KEPT_UNTIL + owned(fence);
	}

	boolean fail(RecordId id, String owner, Throwable failure, Duration retention, Fence fence) {
		Instant now = now();
		return this.bounded.sql("UPDATE " + this.table + " SET status = 'FAILED', response = NULL, "
				+ "error_type = :errorType, error_message = :errorMessage, updated_at = :now, " + KEPT_UNTIL
				+ owned(fence))
			.param("errorType", IdempotencyRecord.errorTypeOf(failure))
			.param("errorMessage", IdempotencyRecord.errorMessageOf(failure), Types.VARCHAR)
			.param("now", now.toEpochMilli())
			.param("expiresAt", now.plus(retention).toEpochMilli())
			.params(owned(id, owner))
			.update() == 1;
	}

	boolean release(RecordId id, String owner, Fence fence) {
		return this.bounded.sql("DELETE FROM " + this.table + owned(fence)).params(owned(id, owner)).update() == 1;
	}

	/**
	 * Extends the lease to now + {@code leaseTtl}, with a recovery point when one is given,
	 * and keeps the record at least until the new lease's end + {@code retention}, as a
	 * claim does: a run that crashes after running longer than its retention leaves its
	 * attempt and recovery point to the run that takes it over.
	 */
	boolean extend(RecordId id, String owner, @Nullable String recoveryPoint, Duration leaseTtl, Duration retention,
			Fence fence) {
		Instant now = now();
		Instant leaseUntil = now.plus(leaseTtl);
		long expiresAt = leaseUntil.plus(retention).toEpochMilli();
		return this.bounded.sql("UPDATE " + this.table + " SET lease_until = :leaseUntil, updated_at = :now, "
				+ "recovery_point = COALESCE(:recoveryPoint, recovery_point), " + KEPT_UNTIL + owned(fence))
			.param("leaseUntil", leaseUntil.toEpochMilli())
			.param("expiresAt", expiresAt)
			.param("now", now.toEpochMilli())
			.param("recoveryPoint", recoveryPoint, Types.VARCHAR)
			.params(owned(id, owner))
			.update() == 1;
	}

	boolean delete(RecordId id) {
		return this.bounded.sql("DELETE FROM " + this.table + " WHERE workflow = :workflow AND idempotency_key = :key")
			.param("workflow", id.workflow())
			.param("key", id.key())
			.update() == 1;
	}

	int deleteExpired(long now, int batchSize) {
		return this.bounded.sql(this.dialect.deleteExpired(this.table))
			.param("now", now)
			.param("limit", batchSize)
			.update();
	}

	private static String owned(Fence fence) {
		return " WHERE workflow = :workflow AND idempotency_key = :key AND owner = :owner" + fence.condition;
	}

	private static Map<String, Object> owned(RecordId id, String owner) {
		return Map.of("workflow", id.workflow(), "key", id.key(), "owner", owner);
	}

	private @Nullable IdempotencyRecord read(String sql, RecordId id) {
		return this.jdbc.sql(sql)
			.param("workflow", id.workflow())
			.param("key", id.key())
			.query(JdbcRecordTable::toRecord)
			.optional()
			.orElse(null);
	}

	/**
	 * The statement, when the dialect has one, made positional over
	 * {@link #RECORD_PARAMETERS} (bound by {@link #values}).
	 */
	private static @Nullable PositionalStatement recordStatement(@Nullable String namedSql) {
		return (namedSql != null) ? new PositionalStatement(namedSql, RECORD_PARAMETERS) : null;
	}

	/** A record's values in the order of {@link #RECORD_PARAMETERS}. */
	private static Object[] values(IdempotencyRecord record) {
		return new Object[] { record.id().workflow(), record.id().key(), record.status().name(),
				new SqlParameterValue(Types.VARCHAR, record.fingerprint()), record.owner(), record.attempt(),
				record.leaseUntil().toEpochMilli(), new SqlParameterValue(Types.VARCHAR, record.recoveryPoint()),
				new SqlParameterValue(Types.VARCHAR, record.response()),
				new SqlParameterValue(Types.VARCHAR, record.errorType()),
				new SqlParameterValue(Types.VARCHAR, record.errorMessage()), record.createdAt().toEpochMilli(),
				record.updatedAt().toEpochMilli(), record.expiresAt().toEpochMilli() };
	}

	/** A row of the {@link JdbcDialect#COLUMNS}, among other columns. */
	private static IdempotencyRecord toRecord(ResultSet rs, int row) throws SQLException {
		int status = rs.findColumn("status");
		return toRecord(new RecordId(rs.getString(status - 2), rs.getString(status - 1)), rs, status);
	}

	/** A row of the {@link JdbcDialect#FIELDS}, among other columns, whose id is known. */
	private static IdempotencyRecord toRecord(RecordId id, ResultSet rs) throws SQLException {
		return toRecord(id, rs, rs.findColumn("status"));
	}

	/**
	 * The {@link JdbcDialect#FIELDS} of a row, read by position from {@code status}: one
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
