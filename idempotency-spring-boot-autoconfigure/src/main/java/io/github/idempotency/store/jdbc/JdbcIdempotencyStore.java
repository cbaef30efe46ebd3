package io.github.idempotency.store.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

/**
 * A store in one database table, on {@link JdbcClient}: PostgreSQL, MariaDB/MySQL and H2.
 * <p>
 * A claim inserts the record atomically (PostgreSQL {@code ON CONFLICT DO NOTHING}, a
 * duplicate-key error elsewhere): a first delivery's claim is that one statement. Only
 * when the row existed is it read: finished records and live leases are answered from a
 * plain read (a duplicate costs two statements); a takeover candidate is locked with
 * {@code SELECT ... FOR UPDATE NOWAIT} and taken over by an update, in one short
 * transaction. A lock held by
 * another transaction (or a lock wait longer than the lock timeout) means the key is in
 * progress. Every other step is one fenced statement.
 * <p>
 * <b>Transactions.</b> When a Spring transaction is active on this store's
 * {@link DataSource} (a {@code DataSourceTransactionManager} or {@code JpaTransactionManager}
 * transaction), every step joins it: the record commits or rolls back with the business
 * writes, and a concurrent duplicate waits on the uncommitted row (up to the lock timeout)
 * and then sees the committed result. Such claims need no lease renewal — the transaction
 * is the in-progress marker — and a {@code void} operation's claim writes its record
 * already {@code COMPLETED}, so that its whole cost is the claim's one insert. A recovery
 * point saved inside the caller's transaction is part of it: it is lost, with the record,
 * if the transaction rolls back. Without a transaction every statement auto-commits, but
 * for a takeover's lock and update.
 * <p>
 * Times come from the given {@link Clock} as epoch milliseconds, never from the database.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

	private final DataSource dataSource;

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final JdbcDialect dialect;

	private final String table;

	private final Clock clock;

	private final String select;

	private final String insert;

	private final String insertInTransaction;

	/**
	 * A store on {@code dataSource}'s table {@code tableName}.
	 * @param dataSource the application's data source
	 * @param tableName the table (see the {@code schema-*.sql} files beside this class)
	 * @param lockTimeout how long a claim waits for a row another transaction holds
	 * @param clock the clock leases and retention are measured with
	 */
	public JdbcIdempotencyStore(DataSource dataSource, String tableName, Duration lockTimeout, Clock clock) {
		Assert.isTrue(TABLE_NAME.matcher(tableName).matches(), () -> "Invalid table name '" + tableName + "'");
		this.dataSource = dataSource;
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.dialect = JdbcDialect.of(dataSource);
		this.table = tableName;
		this.clock = clock;
		this.select = "SELECT " + JdbcDialect.COLUMNS + " FROM " + tableName
				+ " WHERE workflow = :workflow AND idempotency_key = :key";
		this.insert = this.dialect.insert(tableName, lockTimeout);
		this.insertInTransaction = this.dialect.insertInTransaction(tableName, lockTimeout);
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		boolean joined = TransactionSynchronizationManager.hasResource(this.dataSource);
		try {
			ClaimResult result = claimNow(request, joined);
			return joined ? new ClaimResult(result.outcome(), result.record(), false) : result;
		}
		catch (DataAccessException ex) {
			if (isLockFailure(ex)) {
				return ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(request));
			}
			throw ex;
		}
	}

	/**
	 * Insert (one statement: a first claim ends here); else read (a duplicate, a failure, a
	 * mismatch or a live lease ends here); else, for a takeover, lock and update in one
	 * short transaction (or the caller's).
	 */
	private ClaimResult claimNow(ClaimRequest request, boolean joined) {
		Instant now = this.clock.instant();
		IdempotencyRecord claimed = (joined && !request.resultExpected()) ? finishedByClaim(request, now)
				: ClaimRules.claimed(null, request, now);
		if (insert(claimed, joined)) {
			return ClaimResult.of(ClaimOutcome.ACQUIRED, claimed);
		}
		IdempotencyRecord existing = read(this.select, request.id());
		if (existing == null) {
			// released between the insert and the read: the key is free again
			return insert(claimed, joined) ? ClaimResult.of(ClaimOutcome.ACQUIRED, claimed)
					: ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(request));
		}
		ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), now);
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, existing);
		}
		ClaimResult takeover = joined ? takeOver(request, now)
				: this.transactions.execute((status) -> takeOver(request, now));
		Assert.state(takeover != null, "No claim result");
		return takeover;
	}

	/**
	 * A new record written already {@code COMPLETED}: inside the caller's transaction, for
	 * a {@code void} operation, the transaction is the in-progress marker (others wait on
	 * the uncommitted row, a rollback removes it), so the claim is the only statement.
	 */
	private static IdempotencyRecord finishedByClaim(ClaimRequest request, Instant now) {
		return new IdempotencyRecord(request.id(), RecordStatus.COMPLETED, request.fingerprint(), request.owner(), 1,
				now, null, null, null, null, now, now, now.plus(request.retention()));
	}

	private ClaimResult takeOver(ClaimRequest request, Instant now) {
		IdempotencyRecord locked = read(this.dialect.selectForUpdate(this.table), request.id());
		ClaimOutcome outcome = ClaimRules.decide(locked, request.fingerprint(), now);
		if (locked == null || outcome != ClaimOutcome.ACQUIRED) {
			return (locked != null) ? ClaimResult.of(outcome, locked)
					: ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(request));
		}
		IdempotencyRecord takeover = ClaimRules.claimed(locked, request, now);
		this.jdbc.sql("UPDATE " + this.table + " SET status = :status, fingerprint = :fingerprint, owner = :owner, "
				+ "attempt = :attempt, lease_until = :leaseUntil, recovery_point = :recoveryPoint, response = NULL, "
				+ "error_type = NULL, error_message = NULL, created_at = :createdAt, updated_at = :updatedAt, "
				+ "expires_at = :expiresAt WHERE workflow = :workflow AND idempotency_key = :key")
			.paramSource(parameters(takeover))
			.update();
		return ClaimResult.of(ClaimOutcome.ACQUIRED, takeover);
	}

	private boolean insert(IdempotencyRecord record, boolean joined) {
		try {
			String insert = joined ? this.insertInTransaction : this.insert;
			return this.dialect.inserted(this.jdbc.sql(insert).paramSource(parameters(record)), joined);
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	@Override
	public boolean complete(RecordId id, String owner, @Nullable String response, Duration retention) {
		Instant now = this.clock.instant();
		return this.jdbc.sql("UPDATE " + this.table + " SET status = 'COMPLETED', response = :response, "
				+ "updated_at = :now, expires_at = :expiresAt" + OWNED)
			.param("response", response)
			.param("now", now.toEpochMilli())
			.param("expiresAt", now.plus(retention).toEpochMilli())
			.params(owned(id, owner))
			.update() == 1;
	}

	@Override
	public boolean fail(RecordId id, String owner, String errorType, @Nullable String errorMessage,
			Duration retention) {
		Instant now = this.clock.instant();
		return this.jdbc.sql("UPDATE " + this.table + " SET status = 'FAILED', error_type = :errorType, "
				+ "error_message = :errorMessage, updated_at = :now, expires_at = :expiresAt" + owned())
			.param("errorType", errorType)
			.param("errorMessage", errorMessage)
			.param("now", now.toEpochMilli())
			.param("expiresAt", now.plus(retention).toEpochMilli())
			.params(owned(id, owner))
			.update() == 1;
	}

	@Override
	public boolean release(RecordId id, String owner) {
		return this.jdbc.sql("DELETE FROM " + this.table + owned()).params(owned(id, owner)).update() == 1;
	}

	@Override
	public boolean renew(RecordId id, String owner, Duration leaseTtl) {
		return extend(id, owner, null, leaseTtl);
	}

	@Override
	public boolean saveRecoveryPoint(RecordId id, String owner, String recoveryPoint, Duration leaseTtl) {
		return extend(id, owner, recoveryPoint, leaseTtl);
	}

	private boolean extend(RecordId id, String owner, @Nullable String recoveryPoint, Duration leaseTtl) {
		Instant now = this.clock.instant();
		long leaseUntil = now.plus(leaseTtl).toEpochMilli();
		return this.jdbc.sql("UPDATE " + this.table + " SET lease_until = :leaseUntil, updated_at = :now, "
				+ "recovery_point = COALESCE(:recoveryPoint, recovery_point), "
				+ "expires_at = CASE WHEN expires_at < :leaseUntil THEN :leaseUntil ELSE expires_at END" + owned())
			.param("leaseUntil", leaseUntil)
			.param("now", now.toEpochMilli())
			.param("recoveryPoint", recoveryPoint, java.sql.Types.VARCHAR)
			.params(owned(id, owner))
			.update() == 1;
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		IdempotencyRecord record = read(this.select, id);
		return (record == null || record.isExpired(this.clock.instant())) ? Optional.empty() : Optional.of(record);
	}

	@Override
	public boolean delete(RecordId id) {
		return this.jdbc.sql("DELETE FROM " + this.table + " WHERE workflow = :workflow AND idempotency_key = :key")
			.param("workflow", id.workflow())
			.param("key", id.key())
			.update() == 1;
	}

	@Override
	public String backend() {
		return "jdbc";
	}

	/**
	 * Deletes expired records, at most {@code batchSize} per statement, until none is left.
	 * Safe to run on several instances at once. A live {@code IN_PROGRESS} record never
	 * expires: its expiry is its lease plus the retention.
	 * @param batchSize the most rows one statement deletes
	 * @return how many records were deleted
	 */
	public int deleteExpired(int batchSize) {
		long now = this.clock.millis();
		int total = 0;
		int deleted;
		do {
			deleted = this.jdbc.sql(this.dialect.deleteExpired(this.table))
				.param("now", now)
				.param("limit", batchSize)
				.update();
			total += deleted;
		}
		while (deleted >= batchSize);
		return total;
	}

	private static final String OWNED = " WHERE workflow = :workflow AND idempotency_key = :key AND owner = :owner "
			+ "AND status = 'IN_PROGRESS'";

	/**
	 * Inside the caller's transaction a record its claim wrote already finished
	 * ({@link #finishedByClaim}) still belongs to that claim until the transaction ends: a
	 * failure of the operation releases or fails it, a recovery point is saved on it.
	 */
	private static final String OWNED_IN_TRANSACTION = " WHERE workflow = :workflow AND idempotency_key = :key "
			+ "AND owner = :owner AND status IN ('IN_PROGRESS', 'COMPLETED')";

	private String owned() {
		return TransactionSynchronizationManager.hasResource(this.dataSource) ? OWNED_IN_TRANSACTION : OWNED;
	}

	private static java.util.Map<String, Object> owned(RecordId id, String owner) {
		return java.util.Map.of("workflow", id.workflow(), "key", id.key(), "owner", owner);
	}

	private @Nullable IdempotencyRecord read(String sql, RecordId id) {
		return this.jdbc.sql(sql)
			.param("workflow", id.workflow())
			.param("key", id.key())
			.query(JdbcIdempotencyStore::toRecord)
			.optional()
			.orElse(null);
	}

	/**
	 * The record another transaction holds, as far as it can be seen now (an uncommitted
	 * insert cannot be).
	 */
	private IdempotencyRecord heldElsewhere(ClaimRequest request) {
		try {
			IdempotencyRecord record = read(this.select, request.id());
			if (record != null) {
				return record;
			}
		}
		catch (DataAccessException ex) {
			// the caller's transaction is aborted (PostgreSQL after a lock error)
		}
		Instant now = this.clock.instant();
		return new IdempotencyRecord(request.id(), RecordStatus.IN_PROGRESS, null, "(another transaction)", 1,
				now.plus(request.leaseTtl()), null, null, null, null, now, now, now.plus(request.leaseTtl()));
	}

	private boolean isLockFailure(DataAccessException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql) {
				for (SQLException next = sql; next != null; next = next.getNextException()) {
					if (this.dialect.isLockFailure(next)) {
						return true;
					}
				}
			}
		}
		return false;
	}

	private static org.springframework.jdbc.core.namedparam.MapSqlParameterSource parameters(IdempotencyRecord record) {
		return new org.springframework.jdbc.core.namedparam.MapSqlParameterSource()
			.addValue("workflow", record.id().workflow())
			.addValue("key", record.id().key())
			.addValue("status", record.status().name())
			.addValue("fingerprint", record.fingerprint(), java.sql.Types.VARCHAR)
			.addValue("owner", record.owner())
			.addValue("attempt", record.attempt())
			.addValue("leaseUntil", record.leaseUntil().toEpochMilli())
			.addValue("recoveryPoint", record.recoveryPoint(), java.sql.Types.VARCHAR)
			.addValue("response", record.response(), java.sql.Types.VARCHAR)
			.addValue("errorType", record.errorType(), java.sql.Types.VARCHAR)
			.addValue("errorMessage", record.errorMessage(), java.sql.Types.VARCHAR)
			.addValue("createdAt", record.createdAt().toEpochMilli())
			.addValue("updatedAt", record.updatedAt().toEpochMilli())
			.addValue("expiresAt", record.expiresAt().toEpochMilli());
	}

	private static IdempotencyRecord toRecord(ResultSet rs, int row) throws SQLException {
		return new IdempotencyRecord(new RecordId(rs.getString("workflow"), rs.getString("idempotency_key")),
				RecordStatus.valueOf(rs.getString("status")), rs.getString("fingerprint"), rs.getString("owner"),
				rs.getInt("attempt"), Instant.ofEpochMilli(rs.getLong("lease_until")), rs.getString("recovery_point"),
				rs.getString("response"), rs.getString("error_type"), rs.getString("error_message"),
				Instant.ofEpochMilli(rs.getLong("created_at")), Instant.ofEpochMilli(rs.getLong("updated_at")),
				Instant.ofEpochMilli(rs.getLong("expires_at")));
	}

}
