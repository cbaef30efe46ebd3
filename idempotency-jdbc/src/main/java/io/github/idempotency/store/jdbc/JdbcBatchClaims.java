package io.github.idempotency.store.jdbc;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.jdbc.JdbcInserts.Insertion;
import io.github.idempotency.store.sql.BatchClaimSql;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * The batch claim, as the database's {@link BatchClaimSql} says: one statement over
 * arrays (PostgreSQL); one multi-row upsert outside a transaction unless the workflow
 * reads first (MariaDB); otherwise one read of the rows that exist and one insert of all
 * the others, or, for a workflow whose claims are nearly all new, that insert of them all
 * alone (see {@link #readThenInsert}). What the batch statements cannot decide is claimed
 * again on its own, by the single claim ({@link JdbcClaims}): a key named twice, a row
 * committed while the statement ran (its snapshot does not show it), an expired record or
 * a lease that ran out (a takeover locks the row), a live claim found inside the caller's
 * transaction, and the whole batch when the statement lost a lock wait outside a
 * transaction (inside one, that ends the call, as a single claim's lost wait does). The
 * records are inserted in one order (workflow, then key) whatever the order given, so
 * that overlapping batches never wait for each other in a cycle.
 */
final class JdbcBatchClaims {

	static final Comparator<ClaimRequest> INSERT_ORDER = Comparator
		.comparing((ClaimRequest request) -> request.id().workflow())
		.thenComparing((request) -> request.id().key());

	/** The most records one statement naming its rows names. */
	private static final int MAX_ROWS = 1000;

	private final JdbcRecordTable table;

	private final JdbcClaims claims;

	private final BatchClaimSql sql;

	JdbcBatchClaims(JdbcRecordTable table, JdbcClaims claims) {
		this.table = table;
		this.claims = claims;
		this.sql = table.statements().batchClaim();
	}

	List<ClaimResult> claimAll(List<ClaimRequest> requests, boolean inTransaction) {
		@Nullable ClaimResult[] results = new ClaimResult[requests.size()];
		try {
			List<Integer> positions = firstOfEachKey(requests);
			if (this.sql instanceof BatchClaimSql.OverArrays arrays) {
				String workflow = requests.get(positions.get(0)).id().workflow();
				boolean likelyNew = this.claims.insertsFirst(workflow);
				claimAtOnce(requests, positions, results, inTransaction,
						(claimed) -> this.table.inserts().insertOrReadAll(arrays, claimed, inTransaction, likelyNew));
			}
			else if (this.sql instanceof BatchClaimSql.Upsert upsert && !inTransaction
					&& !this.claims.readsFirst(requests.get(0).id().workflow())) {
				// inside the caller's transaction an upsert's lock on a row that exists would last until it ends
				for (List<Integer> chunk : chunks(positions)) {
					claimAtOnce(requests, chunk, results, false,
							(claimed) -> this.table.inserts().upsertAll(upsert.upsertAll().apply(claimed.size()), claimed));
				}
			}
			else {
				BatchClaimSql.ReadThenInsert readThenInsert = (this.sql instanceof BatchClaimSql.Upsert upsert)
						? upsert.otherwise() : (BatchClaimSql.ReadThenInsert) this.sql;
				for (List<Integer> chunk : chunks(positions)) {
					readThenInsert(readThenInsert, requests, chunk, results, inTransaction);
				}
			}
			for (int i = 0; i < results.length; i++) {
				if (results[i] == null) {
					results[i] = this.claims.claim(this.table, requests.get(i), inTransaction);
				}
			}
		}
		catch (RuntimeException ex) {
			releaseAcquired(results, ex);
			throw ex;
		}
		return Arrays.asList(results);
	}

	/**
	 * The position of the first request of each key, in insert order.
	 */
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
	 * whose rows do not exist and answers the rows it found (for keys most likely new on
	 * PostgreSQL, see {@link ReadFirst}: one insert, followed by a read of the rows it found
	 * only when it found any), answering in {@code results} those it decided.
	 */
	private void claimAtOnce(List<ClaimRequest> requests, List<Integer> positions, @Nullable ClaimResult[] results,
			boolean inTransaction, Function<List<IdempotencyRecord>, @Nullable Insertion[]> statement) {
		Instant stampedAt = this.table.now();
		List<IdempotencyRecord> claimed = new ArrayList<>(positions.size());
		for (int i : positions) {
			claimed.add(JdbcClaims.claimed(null, requests.get(i), stampedAt, inTransaction));
		}
		@Nullable Insertion[] found;
		try {
			found = statement.apply(claimed);
		}
		catch (DataAccessException ex) {
			boolean lockFailure = this.table.isLockFailure(ex) || ex instanceof ConcurrencyFailureException;
			if (inTransaction && lockFailure) {
				throw JdbcClaims.cannotWaitInTransaction(requests.get(positions.get(0)), ex);
			}
			if (lockFailure) {
				// the statement inserted nothing: every request is claimed on its own
				return;
			}
			throw ex;
		}
		// every inserted record is answered first, so that a failure below releases them all
		for (int j = 0; j < found.length; j++) {
			if (found[j] != null && found[j].inserted()) {
				int i = positions.get(j);
				results[i] = this.claims.acquired(this.table, claimed.get(j), requests.get(i), inTransaction);
			}
		}
		// the insert may have waited on another transaction's row: decide on the time now
		Instant now = this.table.now();
		ClaimRequest heldElsewhere = null;
		for (int j = 0; j < found.length; j++) {
			int i = positions.get(j);
			if (found[j] == null || found[j].inserted()) {
				continue;
			}
			IdempotencyRecord existing = found[j].existing();
			ClaimOutcome outcome = ClaimRules.decide(existing, requests.get(i).fingerprint(), now);
			if (outcome == ClaimOutcome.IN_PROGRESS && inTransaction) {
				heldElsewhere = (heldElsewhere != null) ? heldElsewhere : requests.get(i);
			}
			else if (outcome != ClaimOutcome.ACQUIRED && existing != null) { // not acquired: a record was found
				results[i] = ClaimResult.of(outcome, existing);
			}
		}
		for (int j = 0; j < found.length; j++) {
			int i = positions.get(j);
			this.claims.recordClaim(requests.get(i).id().workflow(),
					found[j] != null && !found[j].inserted() && results[i] != null);
		}
		if (heldElsewhere != null) {
			throw JdbcClaims.cannotWaitInTransaction(heldElsewhere, null);
		}
		for (int j = 0; j < found.length; j++) {
			if (found[j] != null && found[j].inserted() && !inTransaction) {
				int i = positions.get(j);
				results[i] = this.claims.acquiredAfterInsert(this.table, results[i], requests.get(i), false, stampedAt);
			}
		}
	}

	/**
	 * Claims the requests at {@code positions} with one read of the rows that exist and one
	 * insert of all the others, answering in {@code results} those it decided; for a
	 * workflow whose claims are nearly all new (see {@link ReadFirst}) the insert of them
	 * all comes first, and the read only when it met a row. Outside a transaction each
	 * statement commits on its own and reads the latest committed rows (REPEATABLE READ
	 * takes a snapshot per statement there). An insert is all or nothing: when it met a row
	 * (a duplicate key) it inserted none, and the requests it left are claimed on their
	 * own, as they are when it lost a lock wait outside a transaction. Inside the caller's
	 * transaction a lost lock wait ends the call, as a single claim's does there, and a
	 * live claim the read found is left to the single claim, which answers it so.
	 */
	private void readThenInsert(BatchClaimSql.ReadThenInsert sql, List<ClaimRequest> requests,
			List<Integer> positions, @Nullable ClaimResult[] results, boolean inTransaction) {
		if (this.claims.insertsFirst(requests.get(positions.get(0)).id().workflow())
				&& insertAll(sql, requests, positions, results, inTransaction)) {
			return;
		}
		Map<RecordId, IdempotencyRecord> existing = this.table.rows()
			.readAll(sql.selectAll().apply(positions.size()), positions.stream().map((i) -> requests.get(i).id()).toList());
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
				results[i] = ClaimResult.of(outcome, found);
				this.claims.recordClaim(requests.get(i).id().workflow(), true);
			}
		}
		if (!absent.isEmpty()) {
			insertAll(sql, requests, absent, results, inTransaction);
		}
	}

	/**
	 * Claims the requests at {@code positions} with one insert of them all, answering them
	 * in {@code results} when it inserted them.
	 * @return {@code false} when it inserted none: a row existed, or (outside a
	 * transaction) it lost a lock wait
	 */
	private boolean insertAll(BatchClaimSql.ReadThenInsert sql, List<ClaimRequest> requests, List<Integer> positions,
			@Nullable ClaimResult[] results, boolean inTransaction) {
		Instant stampedAt = this.table.now();
		List<IdempotencyRecord> claimed = new ArrayList<>(positions.size());
		for (int i : positions) {
			claimed.add(JdbcClaims.claimed(null, requests.get(i), stampedAt, inTransaction));
		}
		try {
			if (!this.table.inserts().insertAll(sql.insertAll().apply(claimed.size()), claimed)) {
				return false;
			}
		}
		catch (DataAccessException ex) {
			if (!this.table.isLockFailure(ex) && !(ex instanceof ConcurrencyFailureException)) {
				throw ex;
			}
			if (inTransaction) {
				throw JdbcClaims.cannotWaitInTransaction(requests.get(positions.get(0)), ex);
			}
			return false;
		}
		for (int j = 0; j < positions.size(); j++) {
			int i = positions.get(j);
			results[i] = this.claims.acquired(this.table, claimed.get(j), requests.get(i), inTransaction);
		}
		for (int i : positions) {
			this.claims.recordClaim(requests.get(i).id().workflow(), false);
			results[i] = this.claims.acquiredAfterInsert(this.table, results[i], requests.get(i), inTransaction,
					stampedAt);
		}
		return true;
	}

	private static void releaseAcquired(@Nullable ClaimResult[] results, RuntimeException ex) {
		for (ClaimResult result : results) {
			if (result != null && result.handle() != null) {
				try {
					// never ran: given back, even inside a transaction that commits
					result.handle().abandon();
				}
				catch (RuntimeException releaseFailure) {
					ex.addSuppressed(releaseFailure);
				}
			}
		}
	}

}
