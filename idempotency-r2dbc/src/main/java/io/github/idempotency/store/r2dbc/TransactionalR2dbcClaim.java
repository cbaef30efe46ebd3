package io.github.idempotency.store.r2dbc;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.sql.Fence;
import org.springframework.transaction.reactive.TransactionSynchronization;

/**
 * A claim made inside the caller's reactive transaction on the store's
 * {@code ConnectionFactory}, as the jdbc store's claim inside a transaction. The transaction
 * is the in-progress marker: other runs wait on the uncommitted row, a rollback removes it.
 * So the claim wrote its row already {@code COMPLETED}, needs no lease renewal, and each
 * step works on the row in that transaction (found in the step's Reactor context).
 * <p>
 * After a failure the record's fate follows the transaction's: if it commits all the same
 * (a caught error), the operation's writes stay, so the record is marked {@code FAILED}
 * just before the commit and the failure is replayed; if it rolls back, nothing of the
 * claim remains, except a permanent failure ({@link #fail}), which is then stored in a
 * short transaction of its own so that it is replayed.
 */
final class TransactionalR2dbcClaim implements ReactiveClaimHandle {

	private static final Log logger = LogFactory.getLog(TransactionalR2dbcClaim.class);

	private final R2dbcClaims claims;

	private final R2dbcRecordTable table;

	private final R2dbcTransactions transactions;

	private final ClaimRequest request;

	TransactionalR2dbcClaim(R2dbcClaims claims, R2dbcRecordTable table, R2dbcTransactions transactions,
			ClaimRequest request) {
		this.claims = claims;
		this.table = table;
		this.transactions = transactions;
		this.request = request;
	}

	R2dbcRecordTable table() {
		return this.table;
	}

	ClaimRequest request() {
		return this.request;
	}

	/**
	 * Stores the response, when there is one: a {@code void} operation's record was written
	 * finished by its claim, so its whole cost is that one statement.
	 */
	@Override
	public Mono<Boolean> complete(@Nullable String response) {
		return (response == null) ? Mono.just(true) : this.table.steps()
			.complete(this.request.id(), this.request.owner(), response, this.request.retention(), Fence.TRANSACTION);
	}

	@Override
	public Mono<Boolean> fail(Throwable failure) {
		return afterFailure(failure, true);
	}

	@Override
	public Mono<Boolean> release(Throwable failure) {
		return afterFailure(failure, false);
	}

	/** Deletes the row in the transaction: it goes whatever the transaction does, as the operation never ran. */
	@Override
	public Mono<Boolean> abandon() {
		return this.table.steps().release(this.request.id(), this.request.owner(), Fence.TRANSACTION);
	}

	@Override
	public boolean joinsTransaction() {
		return true;
	}

	@Override
	public Mono<Boolean> renew() {
		return Mono.just(true);
	}

	@Override
	public Mono<Boolean> saveRecoveryPoint(String recoveryPoint) {
		return this.table.steps()
			.extend(this.request.id(), this.request.owner(), recoveryPoint, this.request.leaseTtl(),
					this.request.retention(), Fence.TRANSACTION);
	}

	private Mono<Boolean> afterFailure(Throwable failure, boolean permanent) {
		return this.transactions.register(new AfterFailure(failure, permanent))
			.flatMap((registered) -> registered ? Mono.just(true)
					// no way to learn the transaction's outcome: if it commits, the record says why
					: this.table.steps()
						.fail(this.request.id(), this.request.owner(), failure, this.request.retention(),
								Fence.TRANSACTION)
						.thenReturn(true));
	}

	/** Settles the record of a failed operation once the transaction's outcome is known. */
	private final class AfterFailure implements TransactionSynchronization {

		private final Throwable failure;

		private final boolean permanent;

		AfterFailure(Throwable failure, boolean permanent) {
			this.failure = failure;
			this.permanent = permanent;
		}

		@Override
		public Mono<Void> beforeCommit(boolean readOnly) {
			ClaimRequest request = TransactionalR2dbcClaim.this.request;
			return TransactionalR2dbcClaim.this.table.steps()
				.fail(request.id(), request.owner(), this.failure, request.retention(), Fence.TRANSACTION)
				// a nested transaction (savepoint) rolled the claim back: record the failure again
				.flatMap((marked) -> (!marked && this.permanent)
						? TransactionalR2dbcClaim.this.claims.recordFailure(request, this.failure) : Mono.empty());
		}

		@Override
		public Mono<Void> afterCompletion(int status) {
			if (status == STATUS_COMMITTED || !this.permanent) {
				return Mono.empty();
			}
			ClaimRequest request = TransactionalR2dbcClaim.this.request;
			return TransactionalR2dbcClaim.this.claims.recordFailureInOwnTransaction(request, this.failure)
				.onErrorResume((ex) -> {
					logger.warn("Could not record the failure of " + request.id() + " after its transaction rolled "
							+ "back; the next delivery runs it again", ex);
					return Mono.empty();
				});
		}

	}

}
