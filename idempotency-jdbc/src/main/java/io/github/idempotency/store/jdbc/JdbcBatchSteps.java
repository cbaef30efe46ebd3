package io.github.idempotency.store.jdbc;

import io.github.idempotency.store.ReadFirst;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.jdbc.JdbcRecordTable.Fence;
import io.github.idempotency.store.jdbc.JdbcRecordTable.Insertion;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * The batch steps of {@link JdbcIdempotencyStore}: a claim of many records in one
 * statement, and a completion of many in one round trip and one commit.
 * <p>
 * On PostgreSQL the batch claim is one statement: it inserts every record whose row it
 * does not find and reads every row it finds. On MariaDB outside the caller's transaction
 * it is one too (an insert of every record that answers the rows it found, see
 * {@link JdbcDialect#upsertAll}) unless the workflow reads first. Otherwise, on MariaDB,
 * MySQL and H2, it is one read of the rows that exist and one insert of all the others,
 * or, for a workflow whose claims are nearly all new, that insert of them all alone (see
 * {@link #readThenInsert}). What the batch statements cannot decide is claimed again on
 * its own, by the single claim: a key named twice, a row committed while the statement
 * ran (its snapshot does not show it), an expired record or a lease that ran out (a
 * takeover locks the row), a live claim found inside the caller's transaction, and the
 * whole batch when the statement lost a lock wait outside a transaction (inside one, that
 * ends the call, as a single claim's lost wait does). The records are inserted in one
 * order (workflow, then key) whatever the order given, so that overlapping batches never
 * wait for each other in a cycle.
 */
final class JdbcBatchSteps {

	private static final Comparator<ClaimRequest> INSERT_ORDER = Comparator
		.comparing((ClaimRequest request) -> request.id().workflow())
		.thenComparing((request) -> request.id().key());

	/** The most records one statement of {@link #readThenInsert} names. */
	private static final int MAX_ROWS = 1000;

	private final JdbcIdempotencyStore store;

	private final JdbcRecordTable table;

	JdbcBatchSteps(JdbcIdempotencyStore store, JdbcRecordTable table) {
		this.store = store;
		this.table = table;
	}

	List<ClaimResult> claimAll(List<ClaimRequest> requests, boolean inTransaction) {
		@Nullable ClaimResult[] results = new ClaimResult[requests.size()];
		try {
			List<Integer> positions = firstOfEachKey(requests);
			if (this.table.claimsAllAtOnce()) {
				claimAtOnce(requests, positions, results, inTransaction);
			}
			else {
				// an upsert's lock on a row that exists would last until the caller's transaction ends
				boolean upsert = !inTransaction && this.table.upsertsAll()
						&& !this.store.readsFirst(requests.get(0).id().workflow());
				for (int from = 0; from < positions.size(); from += MAX_ROWS) {
					List<Integer> chunk = positions.subList(from, Math.min(positions.size(), from + MAX_ROWS));
					if (upsert) {
						claimAtOnce(requests, chunk, results, false);
					}
					else {
						readThenInsert(requests, chunk, results, inTransaction);
					}
				}
			}
			for (int i = 0; i < results.length; i++) {
				if (results[i] == null) {
					results[i] = this.store.claim(this.table, requests.get(i), inTransaction);
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

	/**
	 * Claims the requests at {@code positions}, answering in {@code results} those it
	 * decided: in one statement that reads the rows that exist and inserts the others, or,
	 * on PostgreSQL for a workflow whose claims are nearly all new (see {@link ReadFirst}),
	 * in one insert, followed by a read of the rows it found only when it found any.
	 */
	private void claimAtOnce(List<ClaimRequest> requests, List<Integer> positions, @Nullable ClaimResult[] results,
			boolean inTransaction) {
		Instant stampedAt = this.table.now();
		List<IdempotencyRecord> claimed = new ArrayList<>(positions.size());
		for (int i : positions) {
			claimed.add(JdbcIdempotencyStore.claimed(null, requests.get(i), stampedAt, inTransaction));
		}
		String workflow = requests.get(positions.get(0)).id().workflow();
		@Nullable Insertion[] found;
		try {
			found = this.table.claimsAllAtOnce()
					? this.table.insertOrReadAll(claimed, inTransaction, this.store.insertsFirst(workflow))
					: this.table.upsertAll(claimed);
		}
		catch (DataAccessException ex) {
			boolean lockFailure = this.store.isLockFailure(ex) || ex instanceof ConcurrencyFailureException;
			if (inTransaction && lockFailure) {
				throw JdbcIdempotencyStore.cannotWaitInTransaction(requests.get(positions.get(0)), ex);
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
				results[i] = this.store.acquired(this.table, claimed.get(j), requests.get(i), inTransaction);
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
			this.store.recordClaim(requests.get(i).id().workflow(),
					found[j] != null && !found[j].inserted() && results[i] != null);
		}
		if (heldElsewhere != null) {
			throw JdbcIdempotencyStore.cannotWaitInTransaction(heldElsewhere, null);
		}
		for (int j = 0; j < found.length; j++) {
			if (found[j] != null && found[j].inserted() && !inTransaction) {
				int i = positions.get(j);
				results[i] = this.store.acquiredAfterInsert(this.table, results[i], requests.get(i), false, stampedAt);
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
	private void readThenInsert(List<ClaimRequest> requests, List<Integer> positions, @Nullable ClaimResult[] results,
			boolean inTransaction) {
		if (this.store.insertsFirst(requests.get(positions.get(0)).id().workflow())
				&& insertAll(requests, positions, results, inTransaction)) {
			return;
		}
		Map<RecordId, IdempotencyRecord> existing = this.table
			.readAll(positions.stream().map((i) -> requests.get(i).id()).toList());
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
				this.store.recordClaim(requests.get(i).id().workflow(), true);
			}
		}
		if (!absent.isEmpty()) {
			insertAll(requests, absent, results, inTransaction);
		}
	}

	/**
	 * Claims the requests at {@code positions} with one insert of them all, answering them
	 * in {@code results} when it inserted them.
	 * @return {@code false} when it inserted none: a row existed, or (outside a
	 * transaction) it lost a lock wait
	 */
	private boolean insertAll(List<ClaimRequest> requests, List<Integer> positions, @Nullable ClaimResult[] results,
			boolean inTransaction) {
		Instant stampedAt = this.table.now();
		List<IdempotencyRecord> claimed = new ArrayList<>(positions.size());
		for (int i : positions) {
			claimed.add(JdbcIdempotencyStore.claimed(null, requests.get(i), stampedAt, inTransaction));
		}
		try {
			if (!this.table.insertAll(claimed)) {
				return false;
			}
		}
		catch (DataAccessException ex) {
			if (!this.store.isLockFailure(ex) && !(ex instanceof ConcurrencyFailureException)) {
				throw ex;
			}
			if (inTransaction) {
				throw JdbcIdempotencyStore.cannotWaitInTransaction(requests.get(positions.get(0)), ex);
			}
			return false;
		}
		for (int j = 0; j < positions.size(); j++) {
			int i = positions.get(j);
			results[i] = this.store.acquired(this.table, claimed.get(j), requests.get(i), inTransaction);
		}
		for (int i : positions) {
			this.store.recordClaim(requests.get(i).id().workflow(), false);
			results[i] = this.store.acquiredAfterInsert(this.table, results[i], requests.get(i), inTransaction,
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

	/**
	 * Completes the claims in one round trip when they are all this store's claims held
	 * by their leases (one fenced statement on PostgreSQL; on MariaDB one statement that
	 * counts what it completed, kept when it completed them all; else a JDBC batch; in one
	 * transaction so that it commits once), or all held by the caller's transaction (the
	 * {@code void} ones need nothing, their records were written finished; the others one
	 * statement: on MariaDB the one that counts what it completed, followed by a JDBC batch
	 * only when it missed a row).
	 * @return for each handle whether it was completed, or {@code null} when the handles
	 * are not all of one such kind
	 */
	@Nullable List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		if (handles.isEmpty()) {
			return List.of();
		}
		if (handles.stream().allMatch((handle) -> handle instanceof LeasedJdbcClaim leased && leased.table() == this.table)) {
			List<ClaimRequest> requests = handles.stream().map((handle) -> ((LeasedJdbcClaim) handle).request()).toList();
			return completed(complete(requests, responses, Fence.LEASE), handles.size());
		}
		if (handles.stream()
			.allMatch((handle) -> handle instanceof TransactionalJdbcClaim joined && joined.table() == this.table)) {
			List<ClaimRequest> requests = new ArrayList<>();
			List<@Nullable String> stored = new ArrayList<>();
			List<Integer> positions = new ArrayList<>();
			for (int i = 0; i < handles.size(); i++) {
				if (responses.get(i) != null) {
					requests.add(((TransactionalJdbcClaim) handles.get(i)).request());
					stored.add(responses.get(i));
					positions.add(i);
				}
			}
			boolean[] completed = new boolean[handles.size()];
			Arrays.fill(completed, true);
			if (!requests.isEmpty()) {
				boolean[] updated = complete(requests, stored, Fence.TRANSACTION);
				for (int j = 0; j < updated.length; j++) {
					completed[positions.get(j)] = updated[j];
				}
			}
			return completed(completed, handles.size());
		}
		return null;
	}

	/**
	 * Completes the claims in the order a batch claim inserts and locks them (see
	 * {@link #INSERT_ORDER}), so that a completion never holds one row while it waits for
	 * another that a claim holds while it waits for the first.
	 * @return for each claim, in the order given, whether it was completed
	 */
	private boolean[] complete(List<ClaimRequest> requests, List<@Nullable String> responses, Fence fence) {
		List<Integer> order = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			order.add(i);
		}
		order.sort(Comparator.comparing(requests::get, INSERT_ORDER));
		boolean[] sorted = completeInOrder(order.stream().map(requests::get).toList(),
				order.stream().map(responses::get).toList(), fence);
		boolean[] completed = new boolean[sorted.length];
		for (int j = 0; j < sorted.length; j++) {
			completed[order.get(j)] = sorted[j];
		}
		return completed;
	}

	private boolean[] completeInOrder(List<ClaimRequest> requests, List<@Nullable String> responses, Fence fence) {
		List<RecordId> ids = requests.stream().map(ClaimRequest::id).toList();
		List<String> owners = requests.stream().map(ClaimRequest::owner).toList();
		List<Duration> retentions = requests.stream().map(ClaimRequest::retention).toList();
		if (this.table.completesAllAtOnce() || requests.size() == 1) {
			return this.table.completeAll(ids, owners, responses, retentions, fence);
		}
		if (fence == Fence.TRANSACTION) {
			// the caller's transaction holds the rows, and a completion fenced by it alone may be
			// made twice: when the counted statement missed a row (a savepoint rolled its claim
			// back), the JDBC batch below completes them again, each answered
			if (this.table.countsCompletionsOf(responses)
					&& this.table.completeCounted(ids, owners, responses, retentions, fence)) {
				return completedAll(ids.size());
			}
			return this.table.completeAll(ids, owners, responses, retentions, fence);
		}
		if (this.table.countsCompletionsOf(responses) && !this.store.isInTransaction()) {
			// one statement in a transaction of its own, kept when it completed every claim; else
			// rolled back (a claim lost to a takeover, or finished already), and done again below
			boolean all = this.store.inTransaction((status) -> {
				if (this.table.completeCounted(ids, owners, responses, retentions, fence)) {
					return true;
				}
				status.setRollbackOnly();
				return false;
			});
			if (all) {
				return completedAll(ids.size());
			}
		}
		// a JDBC batch of completions, each answered; on its own it would commit each: one
		// transaction commits them all
		return this.store.inTransaction((status) -> this.table.completeAll(ids, owners, responses, retentions, fence));
	}

	private static boolean[] completedAll(int size) {
		boolean[] completed = new boolean[size];
		Arrays.fill(completed, true);
		return completed;
	}

	private static List<Boolean> completed(boolean[] completed, int size) {
		List<Boolean> answers = new ArrayList<>(size);
		for (boolean one : completed) {
			answers.add(one);
		}
		return answers;
	}

}
