package io.github.idempotency.store.r2dbc;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.r2dbc.R2dbcInserts.Insertion;
import io.github.idempotency.store.sql.BatchClaimSql;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * The batch claim, as the jdbc store's, as the database's {@link BatchClaimSql} says: one
 * statement over arrays (PostgreSQL); one multi-row upsert outside a transaction unless the
 * workflow reads first (MariaDB); otherwise one read of the rows that exist and one insert
 * of all the others. What the batch statements cannot decide is claimed again on its own,
 * by the single claim. The records are inserted in one order (workflow, then key) whatever
 * the order given, so that overlapping batches never wait for each other in a cycle.
 */
final class R2dbcBatchClaims {

	static final Comparator<ClaimRequest> INSERT_ORDER = Comparator
		.comparing((ClaimRequest request) -> request.id().workflow())
		.thenComparing((request) -> request.id().key());

	/** The most records one statement naming its rows names. */
	private static final int MAX_ROWS = 1000;

	private final R2dbcRecordTable table;

	private final R2dbcClaims claims;

	private final BatchClaimSql sql;

	R2dbcBatchClaims(R2dbcRecordTable table, R2dbcClaims claims) {
		this.table = table;
		this.claims = claims;
		this.sql = table.statements().batchClaim();
	}

	Mono<List<ReactiveClaimResult>> claimAll(List<ClaimRequest> requests, boolean inTransaction) {
		return Mono.defer(() -> {
			@Nullable ReactiveClaimResult[] results = new ReactiveClaimResult[requests.size()];
			List<Integer> positions = firstOfEachKey(requests);
			Mono<Void> batch;
			if (this.sql instanceof BatchClaimSql.OverArrays arrays) {
				batch = claimAtOnce(requests, positions, results, inTransaction,
						(claimed) -> this.table.inserts().insertOrReadAll(arrays, claimed, inTransaction));
			}
			else if (this.sql instanceof BatchClaimSql.Upsert upsert && !inTransaction
					&& !this.claims.readsFirst(requests.get(0).id().workflow())) {
				// inside the caller's transaction an upsert's lock on a row that exists would last until it ends
				batch = Flux.fromIterable(chunks(positions))
					.concatMap((chunk) -> claimAtOnce(requests, chunk, results, false,
							(claimed) -> this.table.inserts().upsertAll(upsert.upsertAll().apply(claimed.size()), claimed)))
					.then();
			}
			else {
				BatchClaimSql.ReadThenInsert readThenInsert = (this.sql instanceof BatchClaimSql.Upsert upsert)
						? upsert.otherwise() : (BatchClaimSql.ReadThenInsert) this.sql;
				batch = Flux.fromIterable(chunks(positions))
					.concatMap((chunk) -> readThenInsert(readThenInsert, requests, chunk, results, inTransaction))
					.then();
			}
			Mono<Void> rest = Flux.range(0, results.length)
				.concatMap((i) -> (results[i] != null) ? Mono.empty()
						: this.claims.claim(requests.get(i), inTransaction).doOnNext((result) -> results[i] = result))
				.then();
			return batch.then(rest)
				.then(Mono.fromSupplier(() -> answered(results)))
				.onErrorResume((ex) -> releaseAcquired(results, ex));
		});
	}

	private static List<ReactiveClaimResult> answered(@Nullable ReactiveClaimResult[] results) {
		List<ReactiveClaimResult> answers = new ArrayList<>(results.length);
		for (ReactiveClaimResult result : results) {
			answers.add(java.util.Objects.requireNonNull(result, "every request is answered"));
		}
		return answers;
	}

	/** The position of the first request of each key, in insert order. */
	private static List<Integer> firstOfEachKey(List<ClaimRequest> requests) {
		Set<RecordId> named = new HashSet<>();
		List<Integer> positions = new ArrayList<>();
		for (int i = 0; i < requests.size(); i++) {
			if (named.add(requests.get(i).id())) {
				positions.add(i);
			}
		}
		positions.sort(Comparator.comparing(requests::get, INSERT_ORDER));
		return positions;
	}

	private static List<List<Integer>> chunks(List<Integer> positions) {
		List<List<Integer>> chunks = new ArrayList<>();
		for (int from = 0; from < positions.size(); from += MAX_ROWS) {
			chunks.add(positions.subList(from, Math.min(positions.size(), from + MAX_ROWS)));
		}
		return chunks;
	}

	/**
	 * Claims the requests at {@code positions} in one statement that inserts the records
	 * whose rows do not exist and answers the rows it found, answering in {@code results}
	 * those it decided.
	 */
	private Mono<Void> claimAtOnce(List<ClaimRequest> requests, List<Integer> positions,
			@Nullable ReactiveClaimResult[] results, boolean inTransaction,
			Function<List<IdempotencyRecord>, Mono<@Nullable Insertion[]>> statement) {
		return Mono.defer(() -> {
			Instant stampedAt = this.table.now();
			List<IdempotencyRecord> claimed = new ArrayList<>(positions.size());
			for (int i : positions) {
				claimed.add(R2dbcClaims.claimed(null, requests.get(i), stampedAt, inTransaction));
			}
			return statement.apply(claimed).onErrorResume(DataAccessException.class, (ex) -> {
				boolean lockFailure = this.table.isLockFailure(ex) || ex instanceof ConcurrencyFailureException;
				if (inTransaction && lockFailure) {
					return Mono.error(R2dbcClaims.cannotWaitInTransaction(requests.get(positions.get(0)), ex));
				}
				// the statement inserted nothing: every request is claimed on its own
				return lockFailure ? Mono.empty() : Mono.error(ex);
			}).flatMap((found) -> decide(requests, positions, results, inTransaction, claimed, found, stampedAt));
		});
	}

	private Mono<Void> decide(List<ClaimRequest> requests, List<Integer> positions,
			@Nullable ReactiveClaimResult[] results, boolean inTransaction, List<IdempotencyRecord> claimed,
			@Nullable Insertion[] found, Instant stampedAt) {
		// every inserted record is answered first, so that a failure below releases them all
		for (int j = 0; j < found.length; j++) {
			Insertion insertion = found[j];
			if (insertion != null && insertion.inserted()) {
				int i = positions.get(j);
				results[i] = this.claims.acquired(claimed.get(j), requests.get(i), inTransaction);
			}
		}
		// the insert may have waited on another transaction's row: decide on the time now
		Instant now = this.table.now();
		ClaimRequest heldElsewhere = null;
		for (int j = 0; j < found.length; j++) {
			int i = positions.get(j);
			Insertion insertion = found[j];
			IdempotencyRecord existing = (insertion != null) ? insertion.existing() : null;
			if (existing == null) {
				continue;
			}
			ClaimOutcome outcome = ClaimRules.decide(existing, requests.get(i).fingerprint(), now);
			if (outcome == ClaimOutcome.IN_PROGRESS && inTransaction) {
				heldElsewhere = (heldElsewhere != null) ? heldElsewhere : requests.get(i);
			}
			else if (outcome != ClaimOutcome.ACQUIRED) {
				results[i] = ReactiveClaimResult.of(outcome, existing);
			}
		}
		for (int j = 0; j < found.length; j++) {
			int i = positions.get(j);
			Insertion insertion = found[j];
			this.claims.recordClaim(requests.get(i).id().workflow(),
					insertion != null && !insertion.inserted() && results[i] != null);
		}
		if (heldElsewhere != null) {
			return Mono.error(R2dbcClaims.cannotWaitInTransaction(heldElsewhere, null));
		}
		return afterInsert(requests, positions, results, inTransaction, found, stampedAt);
	}

	/** Stamps again the leases of the claims inserted that lost a third of their length meanwhile. */
	private Mono<Void> afterInsert(List<ClaimRequest> requests, List<Integer> positions,
			@Nullable ReactiveClaimResult[] results, boolean inTransaction, @Nullable Insertion[] found,
			Instant stampedAt) {
		if (inTransaction) {
			return Mono.empty();
		}
		return Flux.range(0, found.length).concatMap((j) -> {
			Insertion insertion = found[j];
			int i = positions.get(j);
			ReactiveClaimResult acquired = results[i];
			if (insertion == null || !insertion.inserted() || acquired == null) {
				return Mono.empty();
			}
			return this.claims.acquiredAfterInsert(acquired, requests.get(i), false, stampedAt)
				.doOnNext((result) -> results[i] = result);
		}).then();
	}

	/**
	 * Claims the requests at {@code positions} with one read of the rows that exist and one
	 * insert of all the others (for a workflow whose claims are nearly all new, that insert
	 * first, and the read only when it met a row).
	 */
	private Mono<Void> readThenInsert(BatchClaimSql.ReadThenInsert sql, List<ClaimRequest> requests,
			List<Integer> positions, @Nullable ReactiveClaimResult[] results, boolean inTransaction) {
		Mono<Boolean> first = this.claims.insertsFirst(requests.get(positions.get(0)).id().workflow())
				? insertAll(sql, requests, positions, results, inTransaction) : Mono.just(false);
		return first.flatMap((done) -> done ? Mono.empty() : this.table.rows()
			.readAll(sql.selectAll().apply(positions.size()), positions.stream().map((i) -> requests.get(i).id()).toList())
			.flatMap((existing) -> {
				Instant now = this.table.now();
				List<Integer> absent = new ArrayList<>();
				for (int i : positions) {
					IdempotencyRecord found = existing.get(requests.get(i).id());
					if (found == null) {
						absent.add(i);
						continue;
					}
					ClaimOutcome outcome = ClaimRules.decide(found, requests.get(i).fingerprint(), now);
					if (outcome != ClaimOutcome.ACQUIRED && !(inTransaction && outcome == ClaimOutcome.IN_PROGRESS)) {
						results[i] = ReactiveClaimResult.of(outcome, found);
						this.claims.recordClaim(requests.get(i).id().workflow(), true);
					}
				}
				return absent.isEmpty() ? Mono.just(true) : insertAll(sql, requests, absent, results, inTransaction);
			})).then();
	}

	/**
	 * Claims the requests at {@code positions} with one insert of them all.
	 * @return {@code false} when it inserted none: a row existed, or (outside a transaction)
	 * it lost a lock wait
	 */
	private Mono<Boolean> insertAll(BatchClaimSql.ReadThenInsert sql, List<ClaimRequest> requests,
			List<Integer> positions, @Nullable ReactiveClaimResult[] results, boolean inTransaction) {
		return Mono.defer(() -> {
			Instant stampedAt = this.table.now();
			List<IdempotencyRecord> claimed = new ArrayList<>(positions.size());
			for (int i : positions) {
				claimed.add(R2dbcClaims.claimed(null, requests.get(i), stampedAt, inTransaction));
			}
			return this.table.inserts()
				.insertAll(sql.insertAll().apply(claimed.size()), claimed)
				.onErrorResume(DataAccessException.class, (ex) -> {
					if (!this.table.isLockFailure(ex) && !(ex instanceof ConcurrencyFailureException)) {
						return Mono.error(ex);
					}
					return inTransaction
							? Mono.error(R2dbcClaims.cannotWaitInTransaction(requests.get(positions.get(0)), ex))
							: Mono.just(false);
				})
				.flatMap((inserted) -> {
					if (!inserted) {
						return Mono.just(false);
					}
					@Nullable Insertion[] all = new Insertion[positions.size()];
					for (int j = 0; j < positions.size(); j++) {
						int i = positions.get(j);
						all[j] = Insertion.INSERTED;
						results[i] = this.claims.acquired(claimed.get(j), requests.get(i), inTransaction);
						this.claims.recordClaim(requests.get(i).id().workflow(), false);
					}
					return afterInsert(requests, positions, results, inTransaction, all, stampedAt).thenReturn(true);
				});
		});
	}

	/** Gives back the claims acquired before {@code ex}, then signals it. */
	private static Mono<List<ReactiveClaimResult>> releaseAcquired(@Nullable ReactiveClaimResult[] results,
			Throwable ex) {
		List<ReactiveClaimResult> acquired = new ArrayList<>();
		for (ReactiveClaimResult result : results) {
			if (result != null && result.handle() != null) {
				acquired.add(result);
			}
		}
		return Flux.fromIterable(acquired)
			// never ran: given back, even inside a transaction that commits
			.concatMap((result) -> result.acquiredHandle().abandon().onErrorResume((failure) -> {
				ex.addSuppressed(failure);
				return Mono.empty();
			}))
			.then(Mono.error(ex));
	}

}
