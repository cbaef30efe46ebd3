package io.github.idempotency.store.jdbc;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.sql.Fence;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A claim made inside the caller's transaction on the store's data source. The
 * transaction is the in-progress marker: other runs wait on the uncommitted row, a
 * rollback removes it. So the claim wrote its row already {@code COMPLETED}, needs no
 * lease renewal, and each step works on the row in that transaction.
 * <p>
 * After a failure the record's fate follows the transaction's: if it commits all the same
 * (a rollback rule, a caught exception), the operation's writes stay, so the record is
 * marked {@code FAILED} just before the commit and the failure is replayed; if it rolls
 * back, nothing of the claim remains, except a permanent failure ({@link #fail}), which is
 * then stored in a short transaction of its own so that it is replayed.
 */
final class TransactionalJdbcClaim implements ClaimHandle {

	private static final Log logger = LogFactory.getLog(TransactionalJdbcClaim.class);

	private final JdbcClaims claims;

	private final JdbcRecordTable table;

	private final ClaimRequest request;

	TransactionalJdbcClaim(JdbcClaims claims, JdbcRecordTable table, ClaimRequest request) {
		this.claims = claims;
		this.table = table;
		this.request = request;
	}

	/**
	 * Stores the response, when there is one: a {@code void} operation's record was
	 * written finished by its claim, so its whole cost is that one statement.
	 */
	@Override
	public boolean complete(@Nullable String response) {
		return response == null || this.table.steps().complete(this.request.id(), this.request.owner(), response,
				this.request.retention(), Fence.TRANSACTION);
	}

	JdbcRecordTable table() {
		return this.table;
	}

	ClaimRequest request() {
		return this.request;
	}

	@Override
	public boolean fail(Throwable failure) {
		return afterFailure(failure, true);
	}

	@Override
	public boolean release(Throwable failure) {
		return afterFailure(failure, false);
	}

	/**
	 * Deletes the row in the transaction: it goes whatever the transaction does, as the
	 * operation never ran.
	 */
	@Override
	public boolean abandon() {
		return this.table.steps().release(this.request.id(), this.request.owner(), Fence.TRANSACTION);
	}

	@Override
	public boolean joinsTransaction() {
		return true;
	}

	@Override
	public boolean renew() {
		return true;
	}

	@Override
	public boolean saveRecoveryPoint(String recoveryPoint) {
		return this.table.steps().extend(this.request.id(), this.request.owner(), recoveryPoint, this.request.leaseTtl(),
				this.request.retention(), Fence.TRANSACTION);
	}

	private boolean afterFailure(Throwable failure, boolean permanent) {
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new AfterFailure(failure, permanent));
		}
		else {
			// no way to learn the transaction's outcome: if it commits, the record says why
			this.table.steps().fail(this.request.id(), this.request.owner(), failure, this.request.retention(),
					Fence.TRANSACTION);
		}
		return true;
	}

	/**
	 * Settles the record of a failed operation once the transaction's outcome is known.
	 */
	private final class AfterFailure implements TransactionSynchronization {

		private final Throwable failure;

		private final boolean permanent;

		AfterFailure(Throwable failure, boolean permanent) {
			this.failure = failure;
			this.permanent = permanent;
		}

		@Override
		public void beforeCommit(boolean readOnly) {
			ClaimRequest request = TransactionalJdbcClaim.this.request;
			boolean marked = TransactionalJdbcClaim.this.table.steps().fail(request.id(), request.owner(), this.failure,
					request.retention(), Fence.TRANSACTION);
			if (!marked && this.permanent) {
				// a nested transaction (savepoint) rolled the claim back: record the failure again
				TransactionalJdbcClaim.this.claims.recordFailure(TransactionalJdbcClaim.this.table, request,
						this.failure);
			}
		}

		@Override
		public void afterCompletion(int status) {
			if (status != STATUS_COMMITTED && this.permanent) {
				ClaimRequest request = TransactionalJdbcClaim.this.request;
				try {
					TransactionalJdbcClaim.this.claims.recordFailureInOwnTransaction(request, this.failure);
				}
				catch (RuntimeException ex) {
					logger.warn("Could not record the failure of " + request.id() + " after its transaction rolled "
							+ "back; the next delivery runs it again", ex);
				}
			}
		}

	}

}
