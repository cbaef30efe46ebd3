package io.github.idempotency.store.r2dbc;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.sql.Fence;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * The single claim, as the jdbc store's: insert (one statement: a first claim ends here);
 * else read — in the insert's own statement where the database has one — (a duplicate, a
 * failure, a mismatch or a live lease ends here); else, for a takeover, lock the row with
 * {@code SELECT ... FOR UPDATE NOWAIT} and update it in one short transaction (or the
 * caller's). A lock held by another transaction means the key is in progress; inside the
 * caller's transaction the claim then fails at once, retryable. Outside a transaction a
 * claim may first read the row, as {@link ReadFirst} decides; inside the caller's
 * transaction the claimed record is written already {@code COMPLETED} (see
 * {@link TransactionalR2dbcClaim}).
 */
final class R2dbcClaims {

	private final R2dbcRecordTable table;

	private final R2dbcTransactions transactions;

	private final Supplier<ReadFirst> readFirst;

	private final ReadFirst.Choices readFirstChoices = new ReadFirst.Choices();

	R2dbcClaims(R2dbcRecordTable table, R2dbcTransactions transactions, Supplier<ReadFirst> readFirst) {
		this.table = table;
		this.transactions = transactions;
		this.readFirst = readFirst;
	}

	Mono<ReactiveClaimResult> claim(ClaimRequest request, boolean inTransaction) {
		return claimNow(request, inTransaction)
			.flatMap((claim) -> (inTransaction && claim.outcome() == ClaimOutcome.IN_PROGRESS)
					? Mono.<ReactiveClaimResult>error(cannotWaitInTransaction(request, null)) : Mono.just(claim))
			.onErrorResume(DataAccessException.class, (ex) -> {
				boolean lockFailure = this.table.isLockFailure(ex);
				if (inTransaction && (lockFailure || ex instanceof ConcurrencyFailureException)) {
					return Mono.error(cannotWaitInTransaction(request, ex));
				}
				return lockFailure ? inProgress(request) : Mono.error(ex);
			});
	}

	boolean insertsFirst(String workflow) {
		return this.readFirstChoices.insertsFirst(this.readFirst.get(), workflow);
	}

	boolean readsFirst(String workflow) {
		return this.readFirstChoices.readsFirst(this.readFirst.get(), workflow);
	}

	void recordClaim(String workflow, boolean answered) {
		this.readFirstChoices.record(this.readFirst.get(), workflow, answered);
	}

	private Mono<ReactiveClaimResult> claimNow(ClaimRequest request, boolean inTransaction) {
		return Mono.defer(() -> {
			String workflow = request.id().workflow();
			ReadFirst mode = this.readFirst.get();
			if (!inTransaction && this.readFirstChoices.readsFirst(mode, workflow)) {
				// a plain primary-key read: never waits, and answers a finished record or a live claim alone
				return this.table.rows().readFinished(request.id()).map(Optional::of).defaultIfEmpty(Optional.empty())
					.flatMap((existing) -> {
						if (existing.isPresent()) {
							ClaimOutcome outcome = ClaimRules.decide(existing.get(), request.fingerprint(), this.table.now());
							if (outcome != ClaimOutcome.ACQUIRED) {
								this.readFirstChoices.record(mode, workflow, true);
								return Mono.just(ReactiveClaimResult.of(outcome, existing.get()));
							}
						}
						// no row a moment ago: the insert alone most likely claims it
						return counted(mode, workflow, claimByStatement(request, false, existing.isEmpty()));
					});
			}
			return counted(mode, workflow,
					claimByStatement(request, inTransaction, this.readFirstChoices.insertsFirst(mode, workflow)));
		});
	}

	private Mono<ReactiveClaimResult> counted(ReadFirst mode, String workflow, Mono<ReactiveClaimResult> claim) {
		return claim.doOnNext((result) -> this.readFirstChoices.record(mode, workflow,
				result.outcome() != ClaimOutcome.ACQUIRED));
	}

	private Mono<ReactiveClaimResult> claimByStatement(ClaimRequest request, boolean inTransaction, boolean likelyNew) {
		Instant now = this.table.now();
		IdempotencyRecord claimed = claimed(null, request, now, inTransaction);
		return this.table.inserts().insertOrRead(claimed, inTransaction, likelyNew).flatMap((insertion) -> {
			if (insertion.inserted()) {
				return acquiredAfterInsert(acquired(claimed, request, inTransaction), request, inTransaction, now);
			}
			// the insert may have waited on another transaction's row: decide on the time now
			Instant later = this.table.now();
			IdempotencyRecord existing = insertion.existing();
			if (existing == null) {
				// released between the insert and the read: the key is free again
				IdempotencyRecord again = claimed(null, request, later, inTransaction);
				return this.table.inserts().insert(again, inTransaction).flatMap((inserted) -> inserted
						? acquiredAfterInsert(acquired(again, request, inTransaction), request, inTransaction, later)
						: inProgress(request));
			}
			ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), later);
			if (outcome != ClaimOutcome.ACQUIRED) {
				return Mono.just(ReactiveClaimResult.of(outcome, existing));
			}
			return inTransaction ? takeOver(request, later, true)
					: this.transactions.inOwnTransaction(takeOver(request, later, false));
		});
	}

	/**
	 * An inserted claim, as {@link #acquired} answered it. Its lease was stamped before the
	 * insert, which may have waited up to the lock timeout behind another transaction's row:
	 * a lease that lost a third of its length meanwhile is stamped again (fenced, so a run
	 * that took the key over in between wins and this claim answers in progress).
	 */
	Mono<ReactiveClaimResult> acquiredAfterInsert(ReactiveClaimResult acquired, ClaimRequest request,
			boolean inTransaction, Instant stampedAt) {
		Duration elapsed = Duration.between(stampedAt, this.table.now());
		if (inTransaction || Duration.ofSeconds(3 * elapsed.getSeconds(), 3L * elapsed.getNano())
			.compareTo(request.leaseTtl()) <= 0) {
			return Mono.just(acquired);
		}
		return acquired.acquiredHandle().renew().flatMap((renewed) -> this.table.rows().read(request.id())
			.map((current) -> renewed ? ReactiveClaimResult.acquired(current, acquired.acquiredHandle())
					: ReactiveClaimResult.of(ClaimOutcome.IN_PROGRESS, current))
			.defaultIfEmpty(renewed ? acquired : ReactiveClaimResult.of(ClaimOutcome.IN_PROGRESS, acquired.record())));
	}

	/**
	 * Inside the caller's transaction a claim never waits for another run: the transaction
	 * may be aborted (PostgreSQL after a lock error) and holds what it read and locked. The
	 * call fails at once, retryable.
	 */
	static IdempotencyInProgressException cannotWaitInTransaction(ClaimRequest request, @Nullable Exception cause) {
		return new IdempotencyInProgressException("The idempotency key of '" + request.id().workflow()
				+ "' is held by another run; inside the caller's transaction the claim cannot wait for it, "
				+ "so the call fails to be retried", cause);
	}

	private Mono<ReactiveClaimResult> takeOver(ClaimRequest request, Instant now, boolean inTransaction) {
		return this.table.rows().readForUpdate(request.id()).flatMap((locked) -> {
			ClaimOutcome outcome = ClaimRules.decide(locked, request.fingerprint(), now);
			if (outcome != ClaimOutcome.ACQUIRED) {
				return Mono.just(ReactiveClaimResult.of(outcome, locked));
			}
			IdempotencyRecord takeover = claimed(locked, request, now, inTransaction);
			return this.table.inserts().takeOver(takeover).thenReturn(acquired(takeover, request, inTransaction));
		}).switchIfEmpty(Mono.defer(() -> inProgress(request)));
	}

	ReactiveClaimResult acquired(IdempotencyRecord claimed, ClaimRequest request, boolean inTransaction) {
		return ReactiveClaimResult.acquired(claimed,
				inTransaction ? new TransactionalR2dbcClaim(this, this.table, this.transactions, request)
						: new LeasedR2dbcClaim(this.table, request));
	}

	/**
	 * The record a claim writes: as {@link ClaimRules#claimed} says; inside the caller's
	 * transaction already {@code COMPLETED}, with no lease but kept as long as a leased claim.
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
	 * Stores a permanent failure as a claim and its failure, in the transaction the
	 * subscriber's context runs, unless another run holds or finished the key meanwhile.
	 */
	Mono<Void> recordFailure(ClaimRequest request, Throwable failure) {
		return claimNow(request, true)
			.flatMap((claim) -> (claim.outcome() == ClaimOutcome.ACQUIRED) ? this.table.steps()
				.fail(request.id(), request.owner(), failure, request.retention(), Fence.TRANSACTION) : Mono.just(false))
			.onErrorResume(DataAccessException.class,
					// another run holds the key: its outcome stands
					(ex) -> this.table.isLockFailure(ex) ? Mono.just(false) : Mono.error(ex))
			.then();
	}

	/** {@link #recordFailure} in a transaction of its own, apart from the caller's. */
	Mono<Void> recordFailureInOwnTransaction(ClaimRequest request, Throwable failure) {
		return this.transactions.inOwnTransaction(recordFailure(request, failure));
	}

	/** An answer of in progress, with the record another transaction holds as far as it can be seen now. */
	private Mono<ReactiveClaimResult> inProgress(ClaimRequest request) {
		return heldElsewhere(request).map((record) -> ReactiveClaimResult.of(ClaimOutcome.IN_PROGRESS, record));
	}

	/**
	 * The record another transaction holds, as far as it can be seen now (an uncommitted
	 * insert cannot be).
	 */
	Mono<IdempotencyRecord> heldElsewhere(ClaimRequest request) {
		return this.table.rows()
			.read(request.id())
			// the caller's transaction is aborted (PostgreSQL after a lock error)
			.onErrorResume(DataAccessException.class, (ex) -> Mono.empty())
			.switchIfEmpty(Mono.fromSupplier(() -> {
				Instant now = this.table.now();
				return new IdempotencyRecord(request.id(), RecordStatus.IN_PROGRESS, null, "(another transaction)", 1,
						now.plus(request.leaseTtl()), null, null, null, null, now, now, now.plus(request.leaseTtl()));
			}));
	}

}
