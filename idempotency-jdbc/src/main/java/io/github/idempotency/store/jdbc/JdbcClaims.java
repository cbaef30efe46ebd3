package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.sql.ClaimSql;
import io.github.idempotency.store.sql.Fence;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * The single claim: insert (one statement: a first claim ends here); else read — in the
 * insert's own statement where the database has one ({@link ClaimSql}) — (a duplicate, a
 * failure, a mismatch or a live lease ends here); else, for a takeover, lock the row with
 * {@code SELECT ... FOR UPDATE NOWAIT} and update it in one short transaction (or the
 * caller's). A lock held by another transaction (or a lock wait longer than the lock
 * timeout) means the key is in progress. Outside a transaction a claim may first read the
 * row, as {@link ReadFirst} decides; inside the caller's transaction the claimed record is
 * written already {@code COMPLETED} (see {@link TransactionalJdbcClaim}).
 */
final class JdbcClaims {

	private final JdbcRecordTable table;

	private final JdbcTransactions transactions;

	/** The store's read-first setting, read for every claim. */
	private final Supplier<ReadFirst> readFirst;

	private final ReadFirst.Choices readFirstChoices = new ReadFirst.Choices();

	JdbcClaims(JdbcRecordTable table, JdbcTransactions transactions, Supplier<ReadFirst> readFirst) {
		this.table = table;
		this.transactions = transactions;
		this.readFirst = readFirst;
	}

	/**
	 * Claims on {@code table} (the store's, or the same on a connection of its own).
	 */
	ClaimResult claim(JdbcRecordTable table, ClaimRequest request, boolean inTransaction) {
		try {
			ClaimResult claim = claimNow(table, request, inTransaction);
			if (inTransaction && claim.outcome() == ClaimOutcome.IN_PROGRESS) {
				throw cannotWaitInTransaction(request, null);
			}
			return claim;
		}
		catch (DataAccessException ex) {
			if (inTransaction && (table.isLockFailure(ex) || ex instanceof ConcurrencyFailureException)) {
				throw cannotWaitInTransaction(request, ex);
			}
			if (table.isLockFailure(ex)) {
				return ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(table, request));
			}
			throw ex;
		}
	}

	/**
	 * Whether a claim of {@code workflow} inserts first now, rather than use a
	 * one-statement claim (see {@link ReadFirst}), inside the caller's transaction too.
	 */
	boolean insertsFirst(String workflow) {
		return this.readFirstChoices.insertsFirst(this.readFirst.get(), workflow);
	}

	/**
	 * Whether a claim of {@code workflow} outside a transaction reads the record first now
	 * (see {@link ReadFirst}).
	 */
	boolean readsFirst(String workflow) {
		return this.readFirstChoices.readsFirst(this.readFirst.get(), workflow);
	}

	/**
	 * Counts a claim of {@code workflow} for {@link ReadFirst#ADAPTIVE}.
	 * @param answered whether it found a record it answered without writing
	 */
	void recordClaim(String workflow, boolean answered) {
		this.readFirstChoices.record(this.readFirst.get(), workflow, answered);
	}

	private ClaimResult claimNow(JdbcRecordTable table, ClaimRequest request, boolean inTransaction) {
		String workflow = request.id().workflow();
		ReadFirst mode = this.readFirst.get();
		boolean likelyNew = this.readFirstChoices.insertsFirst(mode, workflow);
		if (!inTransaction && this.readFirstChoices.readsFirst(mode, workflow)) {
			// a plain primary-key read: never waits, and answers a finished record or a live claim alone
			IdempotencyRecord existing = table.rows().readFinished(request.id());
			if (existing != null) {
				ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), table.now());
				if (outcome != ClaimOutcome.ACQUIRED) {
					this.readFirstChoices.record(mode, workflow, true);
					return ClaimResult.of(outcome, existing);
				}
			}
			// no row a moment ago: the insert alone most likely claims it
			likelyNew = existing == null;
		}
		ClaimResult claim = claimByStatement(table, request, inTransaction, likelyNew);
		this.readFirstChoices.record(mode, workflow, claim.outcome() != ClaimOutcome.ACQUIRED);
		return claim;
	}

	private ClaimResult claimByStatement(JdbcRecordTable table, ClaimRequest request, boolean inTransaction,
			boolean likelyNew) {
		Instant now = table.now();
		IdempotencyRecord claimed = claimed(null, request, now, inTransaction);
		JdbcInserts.Insertion insertion = table.inserts().insertOrRead(claimed, inTransaction, likelyNew);
		if (insertion.inserted()) {
			return acquiredAfterInsert(table, acquired(table, claimed, request, inTransaction), request, inTransaction,
					now);
		}
		// the insert may have waited on another transaction's row: decide on the time now
		now = table.now();
		IdempotencyRecord existing = insertion.existing();
		if (existing == null) {
			// released between the insert and the read: the key is free again
			claimed = claimed(null, request, now, inTransaction);
			return table.inserts().insert(claimed, inTransaction)
					? acquiredAfterInsert(table, acquired(table, claimed, request, inTransaction), request,
							inTransaction, now)
					: ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(table, request));
		}
		ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), now);
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, existing);
		}
		Instant decidedAt = now;
		return inTransaction ? takeOver(table, request, now, true)
				: this.transactions.inTransaction((status) -> takeOver(table, request, decidedAt, false));
	}

	/**
	 * An inserted claim, {@code acquired} as {@link #acquired} answered it. Its lease was
	 * stamped before the insert, which may have waited up to the lock timeout behind
	 * another transaction's row: a lease that lost a third of its length meanwhile is
	 * stamped again (fenced, so a run that took the key over in between wins and this
	 * claim answers in progress).
	 */
	ClaimResult acquiredAfterInsert(JdbcRecordTable table, ClaimResult acquired, ClaimRequest request,
			boolean inTransaction, Instant stampedAt) {
		if (inTransaction || !lostAThird(Duration.between(stampedAt, table.now()), request.leaseTtl())) {
			return acquired;
		}
		if (!acquired.acquiredHandle().renew()) {
			IdempotencyRecord current = table.rows().read(request.id());
			return ClaimResult.of(ClaimOutcome.IN_PROGRESS, (current != null) ? current : acquired.record());
		}
		IdempotencyRecord renewed = table.rows().read(request.id());
		return (renewed != null) ? ClaimResult.acquired(renewed, acquired.acquiredHandle()) : acquired;
	}

	/**
	 * Whether {@code elapsed} is more than a third of {@code leaseTtl}, counted exactly as
	 * three times {@code elapsed} against {@code leaseTtl} ({@code Duration.dividedBy} goes
	 * through {@code BigDecimal}, once for every claim of a batch).
	 */
	private static boolean lostAThird(Duration elapsed, Duration leaseTtl) {
		return Duration.ofSeconds(3 * elapsed.getSeconds(), 3L * elapsed.getNano()).compareTo(leaseTtl) > 0;
	}

	/**
	 * Inside the caller's transaction a claim never waits for another run: the
	 * transaction may be aborted (PostgreSQL after a lock error, MariaDB after a deadlock)
	 * and holds what it read and locked. The call fails at once, retryable.
	 */
	static IdempotencyInProgressException cannotWaitInTransaction(ClaimRequest request,
			@Nullable Exception cause) {
		return new IdempotencyInProgressException("The idempotency key of '" + request.id().workflow()
				+ "' is held by another run; inside the caller's transaction the claim cannot wait for it, "
				+ "so the call fails to be retried", cause);
	}

	private ClaimResult takeOver(JdbcRecordTable table, ClaimRequest request, Instant now, boolean inTransaction) {
		IdempotencyRecord locked = table.rows().readForUpdate(request.id());
		if (locked == null) {
			return ClaimResult.of(ClaimOutcome.IN_PROGRESS, heldElsewhere(table, request));
		}
		ClaimOutcome outcome = ClaimRules.decide(locked, request.fingerprint(), now);
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, locked);
		}
		IdempotencyRecord takeover = claimed(locked, request, now, inTransaction);
		table.inserts().takeOver(takeover);
		return acquired(table, takeover, request, inTransaction);
	}

	ClaimResult acquired(JdbcRecordTable table, IdempotencyRecord claimed, ClaimRequest request,
			boolean inTransaction) {
		return ClaimResult.acquired(claimed, inTransaction ? new TransactionalJdbcClaim(this, table, request)
				: new LeasedJdbcClaim(table, request));
	}

	/**
	 * The record a claim writes: as {@link ClaimRules#claimed} says; inside the caller's
	 * transaction already {@code COMPLETED}, with no lease but kept as long as a leased
	 * claim (the lease's length + retention), so that a completion within that length
	 * changes no indexed column, as outside a transaction.
	 */
	static IdempotencyRecord claimed(@Nullable IdempotencyRecord existing, ClaimRequest request, Instant now,
			boolean inTransaction) {
		IdempotencyRecord claimed = ClaimRules.claimed(existing, request, now);
		if (!inTransaction) {
			return claimed;
		}
		return new IdempotencyRecord(claimed.id(), RecordStatus.COMPLETED, claimed.fingerprint(), claimed.owner(),
				claimed.attempt(), now, claimed.recoveryPoint(), null, null, null, claimed.createdAt(), now,
				claimed.expiresAt());
	}

	/**
	 * Stores a permanent failure as a claim and its failure, in the transaction
	 * {@code table} runs in, unless another run holds or finished the key meanwhile.
	 */
	void recordFailure(JdbcRecordTable table, ClaimRequest request, Throwable failure) {
		try {
			if (claimNow(table, request, true).outcome() == ClaimOutcome.ACQUIRED) {
				table.steps().fail(request.id(), request.owner(), failure, request.retention(), Fence.TRANSACTION);
			}
		}
		catch (DataAccessException ex) {
			if (!table.isLockFailure(ex)) {
				throw ex;
			}
			// another run holds the key: its outcome stands
		}
	}

	/**
	 * {@link #recordFailure} in a transaction of its own on a connection of its own, apart
	 * from whatever the thread has bound (a transaction that just completed).
	 */
	void recordFailureInOwnTransaction(ClaimRequest request, Throwable failure) {
		try (Connection connection = this.table.dataSource().getConnection()) {
			boolean autoCommit = connection.getAutoCommit();
			connection.setAutoCommit(false);
			try {
				recordFailure(this.table.on(new SingleConnectionDataSource(connection, true)), request, failure);
				connection.commit();
			}
			catch (RuntimeException ex) {
				connection.rollback();
				throw ex;
			}
			finally {
				connection.setAutoCommit(autoCommit);
			}
		}
		catch (SQLException ex) {
			throw new DataAccessResourceFailureException("Could not record the failure of " + request.id(), ex);
		}
	}

	/**
	 * The record another transaction holds, as far as it can be seen now (an uncommitted
	 * insert cannot be).
	 */
	IdempotencyRecord heldElsewhere(JdbcRecordTable table, ClaimRequest request) {
		try {
			IdempotencyRecord record = table.rows().read(request.id());
			if (record != null) {
				return record;
			}
		}
		catch (DataAccessException ex) {
			// the caller's transaction is aborted (PostgreSQL after a lock error)
		}
		Instant now = table.now();
		return new IdempotencyRecord(request.id(), RecordStatus.IN_PROGRESS, null, "(another transaction)", 1,
				now.plus(request.leaseTtl()), null, null, null, null, now, now, now.plus(request.leaseTtl()));
	}

}
