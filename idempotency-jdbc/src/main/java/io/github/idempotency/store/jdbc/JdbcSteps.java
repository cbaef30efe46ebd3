package io.github.idempotency.store.jdbc;

import java.sql.Statement;
import java.sql.Types;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.BatchCompletionSql;
import io.github.idempotency.store.sql.Fence;
import io.github.idempotency.store.sql.LockWaits;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.namedparam.SqlParameterSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The steps of a claim after it was made, each one fenced statement: complete (one claim,
 * or many in one round trip as the database's {@link BatchCompletionSql} says), fail,
 * release and extend. Each is bounded by a query timeout of the lock timeout, but a leased
 * completion that is a transaction of its own where the database bounds its lock wait in
 * the statement ({@link LockWaits.InStatement}): the PostgreSQL driver keeps a query
 * timeout on a timer thread, at a cost of CPU per statement.
 */
final class JdbcSteps {

	/** The most claims one statement of {@link #completeCounted} completes. */
	private static final int MAX_COUNTED_COMPLETIONS = 1000;

	/** The most characters of responses one statement of {@link #completeCounted} carries. */
	private static final int MAX_COUNTED_CHARACTERS = 262_144;

	private final DataSource dataSource;

	/** For the statements that bound their own lock waits. */
	private final JdbcClient jdbc;

	/** For every other statement: bounded by a query timeout of the lock timeout. */
	private final JdbcClient bounded;

	/** For JDBC batches, bounded like {@link #bounded}. */
	private final NamedParameterJdbcTemplate batches;

	private final Clock clock;

	private final JdbcRows rows;

	private final BatchCompletionSql batchCompletion;

	private final Fenced leased;

	private final Fenced inTransaction;

	/** The leased completion bounding its own lock wait, where the database can. */
	private final @Nullable PositionalStatement completeLeasedBoundingItsWait;

	JdbcSteps(SqlStatements statements, DataSource dataSource, JdbcClient jdbc, JdbcClient bounded,
			NamedParameterJdbcTemplate batches, Clock clock, JdbcRows rows) {
		this.dataSource = dataSource;
		this.jdbc = jdbc;
		this.bounded = bounded;
		this.batches = batches;
		this.clock = clock;
		this.rows = rows;
		this.batchCompletion = statements.batchCompletion();
		this.leased = new Fenced(statements, Fence.LEASE);
		this.inTransaction = new Fenced(statements, Fence.TRANSACTION);
		this.completeLeasedBoundingItsWait = (statements.lockWaits() instanceof LockWaits.InStatement inStatement)
				? new PositionalStatement(inStatement.completeLeased(), SqlStatements.COMPLETION_PARAMETERS) : null;
	}

	/** The statements of the steps under one fence. */
	private record Fenced(PositionalStatement complete, String completeNamed, String fail, String release,
			String extend) {

		Fenced(SqlStatements statements, Fence fence) {
			this(new PositionalStatement(statements.complete(fence), SqlStatements.COMPLETION_PARAMETERS),
					statements.complete(fence), statements.fail(fence), statements.release(fence),
					statements.extend(fence));
		}

	}

	private Fenced under(Fence fence) {
		return (fence == Fence.LEASE) ? this.leased : this.inTransaction;
	}

	boolean complete(RecordId id, String owner, @Nullable String response, Duration retention, Fence fence) {
		Instant now = this.clock.instant();
		PositionalStatement boundingItsWait = this.completeLeasedBoundingItsWait;
		boolean selfBounded = boundingItsWait != null && boundsItsOwnLockWait(fence);
		PositionalStatement completion = (boundingItsWait != null && selfBounded) ? boundingItsWait
				: under(fence).complete();
		return completion.on(selfBounded ? this.jdbc : this.bounded, id.workflow(), id.key(), owner,
				new SqlParameterValue(Types.VARCHAR, response), now.toEpochMilli(), now.plus(retention).toEpochMilli())
			.update() == 1;
	}

	/**
	 * Whether {@link #completeAll} completes many claims in one statement, rather than in
	 * a JDBC batch of single completions (which outside a transaction commits each).
	 */
	boolean completesAllAtOnce() {
		return this.batchCompletion instanceof BatchCompletionSql.OverArrays;
	}

	/**
	 * Completes many claims in one round trip: one statement where the database has one
	 * over arrays, otherwise a JDBC batch of {@link #complete}.
	 * @param ids the records
	 * @param owners their claims' owners
	 * @param responses the response of each, {@code null} for {@code void}
	 * @param retentions how long each is kept
	 * @param fence which rows the claims may change
	 * @return for each record whether it was completed
	 */
	boolean[] completeAll(List<RecordId> ids, List<String> owners, List<@Nullable String> responses,
			List<Duration> retentions, Fence fence) {
		Instant now = this.clock.instant();
		int size = ids.size();
		boolean[] completed = new boolean[size];
		if (this.batchCompletion instanceof BatchCompletionSql.OverArrays sql) {
			boolean selfBounded = boundsItsOwnLockWait(fence);
			String statement = selfBounded ? sql.leasedBoundingItsWaits()
					: (fence == Fence.LEASE) ? sql.leased() : sql.inTransaction();
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
		int[] counts = this.batches.batchUpdate(under(fence).completeNamed(), batch);
		for (int i = 0; i < size; i++) {
			// a driver that sends the batch as one bulk statement may not count each row
			completed[i] = (counts[i] == Statement.SUCCESS_NO_INFO) ? this.rows.isCompletedBy(ids.get(i), owners.get(i))
					: counts[i] == 1;
		}
		return completed;
	}

	/**
	 * Whether {@link #completeCounted} completes these claims in one statement: where the
	 * database has one that counts them ({@link BatchCompletionSql.Counted}), for at most
	 * {@value #MAX_COUNTED_COMPLETIONS} claims whose responses hold at most
	 * {@value #MAX_COUNTED_CHARACTERS} characters (at most 2 MiB, escaped: within the
	 * largest packet MariaDB takes by default, 16 MiB, and older servers' 4 MiB).
	 * @param responses the responses of the claims
	 */
	boolean countsCompletionsOf(List<@Nullable String> responses) {
		if (!(this.batchCompletion instanceof BatchCompletionSql.Counted)
				|| responses.size() > MAX_COUNTED_COMPLETIONS) {
			return false;
		}
		long characters = 0;
		for (String response : responses) {
			characters += (response != null) ? response.length() : 0;
		}
		return characters <= MAX_COUNTED_CHARACTERS;
	}

	/**
	 * Completes claims in one statement (only where {@link #countsCompletionsOf}).
	 * @return whether it completed every claim: when not, it may have completed some, and
	 * its transaction is to be rolled back
	 */
	boolean completeCounted(List<RecordId> ids, List<String> owners, List<@Nullable String> responses,
			List<Duration> retentions, Fence fence) {
		if (!(this.batchCompletion instanceof BatchCompletionSql.Counted sql)) {
			throw new IllegalStateException("No counted completion here: ask countsCompletionsOf first");
		}
		int rows = ids.size();
		Instant now = this.clock.instant();
		MapSqlParameterSource parameters = new MapSqlParameterSource("now", now.toEpochMilli());
		for (int i = 0; i < rows; i++) {
			parameters.addValue("workflow" + i, ids.get(i).workflow())
				.addValue("key" + i, ids.get(i).key())
				.addValue("owner" + i, owners.get(i))
				.addValue("response" + i, responses.get(i), Types.VARCHAR)
				.addValue("expiresAt" + i, now.plus(retentions.get(i)).toEpochMilli());
		}
		return this.bounded.sql(sql.completeAll().apply(fence, rows)).paramSource(parameters).update() == rows;
	}

	boolean fail(RecordId id, String owner, Throwable failure, Duration retention, Fence fence) {
		Instant now = this.clock.instant();
		return this.bounded.sql(under(fence).fail())
			.param("errorType", IdempotencyRecord.errorTypeOf(failure))
			.param("errorMessage", IdempotencyRecord.errorMessageOf(failure), Types.VARCHAR)
			.param("now", now.toEpochMilli())
			.param("expiresAt", now.plus(retention).toEpochMilli())
			.params(owned(id, owner))
			.update() == 1;
	}

	boolean release(RecordId id, String owner, Fence fence) {
		return this.bounded.sql(under(fence).release()).params(owned(id, owner)).update() == 1;
	}

	/**
	 * Extends the lease to now + {@code leaseTtl}, with a recovery point when one is given,
	 * and keeps the record at least until the new lease's end + {@code retention}, as a
	 * claim does: a run that crashes after running longer than its retention leaves its
	 * attempt and recovery point to the run that takes it over.
	 */
	boolean extend(RecordId id, String owner, @Nullable String recoveryPoint, Duration leaseTtl, Duration retention,
			Fence fence) {
		Instant now = this.clock.instant();
		Instant leaseUntil = now.plus(leaseTtl);
		long expiresAt = leaseUntil.plus(retention).toEpochMilli();
		return this.bounded.sql(under(fence).extend())
			.param("leaseUntil", leaseUntil.toEpochMilli())
			.param("expiresAt", expiresAt)
			.param("now", now.toEpochMilli())
			.param("recoveryPoint", recoveryPoint, Types.VARCHAR)
			.params(owned(id, owner))
			.update() == 1;
	}

	/**
	 * Whether a completion under {@code fence} bounds its own lock wait: a claim held by its
	 * lease, on a database that can, in a statement that is a transaction of its own, so
	 * that the setting it makes for itself ends with it. That is when no connection of this
	 * data source is bound to the thread: no transaction of the caller's, nor of anybody's
	 * on whose thread a result completes.
	 */
	private boolean boundsItsOwnLockWait(Fence fence) {
		return fence == Fence.LEASE && this.completeLeasedBoundingItsWait != null
				&& TransactionSynchronizationManager.getResource(this.dataSource) == null;
	}

	private static Map<String, Object> owned(RecordId id, String owner) {
		return Map.of("workflow", id.workflow(), "key", id.key(), "owner", owner);
	}

}
