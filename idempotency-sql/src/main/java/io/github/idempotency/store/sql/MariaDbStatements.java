package io.github.idempotency.store.sql;

import java.time.Duration;
import java.util.function.IntFunction;

/**
 * MariaDB: MySQL's statements, each insert's lock waits bounded by
 * {@code SET STATEMENT innodb_lock_wait_timeout}. Outside the caller's transaction a claim
 * is one statement whatever it finds: {@code INSERT ... ON DUPLICATE KEY UPDATE} with a
 * no-op update and {@code RETURNING} answers the inserted row or the existing one, as
 * committed (the update locks the row for that one statement). Inside the caller's
 * transaction that lock would be held until the transaction ends, so there a duplicate key
 * is followed by a read. A batch outside a transaction is claimed the same way, in one
 * multi-row statement; a batch's completion is one multi-table {@code UPDATE} that counts
 * what it completed.
 */
final class MariaDbStatements extends MySqlStatements {

	MariaDbStatements(String table, Duration lockTimeout) {
		super(table, lockTimeout);
	}

	@Override
	public String insert() {
		return "SET STATEMENT innodb_lock_wait_timeout = " + Math.max(1, lockTimeout().toSeconds()) + " FOR "
				+ super.insert();
	}

	/** The owner is unique to a claim: the row carries it only when this statement inserted it. */
	@Override
	public ClaimSql claim() {
		return new ClaimSql.UpsertOutsideTransaction(
				insert() + " ON DUPLICATE KEY UPDATE workflow = workflow RETURNING owner = :owner AS claimed, " + COLUMNS);
	}

	/** As the single claim: a no-op update of each row found answers it as committed. */
	@Override
	public BatchClaimSql batchClaim() {
		IntFunction<String> insertAll = insertAll();
		return new BatchClaimSql.Upsert(
				(rows) -> insertAll.apply(rows) + " ON DUPLICATE KEY UPDATE workflow = workflow RETURNING " + COLUMNS,
				new BatchClaimSql.ReadThenInsert(selectAll(), insertAll));
	}

	/**
	 * One multi-table {@code UPDATE}: the claims first, each row then found by its key (a
	 * scan of the table, which the optimizer picks while it thinks the table small, would
	 * lock rows of other batches and deadlock with them).
	 */
	@Override
	public BatchCompletionSql batchCompletion() {
		String update = sql("""
				) u STRAIGHT_JOIN {table} t FORCE INDEX (PRIMARY) ON t.workflow = u.workflow
				AND t.idempotency_key = u.idempotency_key SET t.status = 'COMPLETED', t.response = u.response,
				t.error_type = NULL, t.error_message = NULL, t.updated_at = :now,
				t.expires_at = CASE WHEN t.expires_at < u.expires_at THEN u.expires_at ELSE t.expires_at END
				WHERE t.owner = u.owner
				""");
		return new BatchCompletionSql.Counted((fence, rows) -> {
			StringBuilder claims = new StringBuilder("UPDATE (SELECT :workflow0 AS workflow, :key0 AS idempotency_key, "
					+ ":owner0 AS owner, :response0 AS response, :expiresAt0 AS expires_at");
			for (int i = 1; i < rows; i++) {
				claims.append(" UNION ALL SELECT :workflow").append(i).append(", :key").append(i).append(", :owner")
					.append(i).append(", :response").append(i).append(", :expiresAt").append(i);
			}
			return claims.append(update).append(fence.condition().replace(" status", " t.status")).toString();
		});
	}

}
