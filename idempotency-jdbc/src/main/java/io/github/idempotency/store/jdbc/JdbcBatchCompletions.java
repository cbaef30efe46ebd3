package io.github.idempotency.store.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.BatchCompletionSql;
import io.github.idempotency.store.sql.Fence;

/**
 * The batch completion: the claims of one batch completed in one round trip and one
 * commit, as the database's {@link BatchCompletionSql} says, when they are all this
 * store's claims of one kind.
 */
final class JdbcBatchCompletions {

	private final JdbcRecordTable table;

	private final JdbcTransactions transactions;

	JdbcBatchCompletions(JdbcRecordTable table, JdbcTransactions transactions) {
		this.table = table;
		this.transactions = transactions;
	}

	/**
	 * Completes the claims in one round trip when they are all this store's claims held
	 * by their leases (one fenced statement over arrays; where the database counts
	 * completions, one statement that counts what it completed, kept when it completed them
	 * all; else a JDBC batch; in one transaction so that it commits once), or all held by
	 * the caller's transaction (the {@code void} ones need nothing, their records were
	 * written finished; the others one statement: where the database counts completions,
	 * the one that counts what it completed, followed by a JDBC batch only when it missed a
	 * row).
	 * @return for each handle whether it was completed, or {@code null} when the handles
	 * are not all of one such kind
	 */
	@Nullable List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		if (handles.isEmpty()) {
			return List.of();
		}
		if (handles.stream().allMatch((handle) -> handle instanceof LeasedJdbcClaim leased && leased.table() == this.table)) {
			List<ClaimRequest> requests = handles.stream().map((handle) -> ((LeasedJdbcClaim) handle).request()).toList();
			return completed(complete(requests, responses, Fence.LEASE));
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
			return completed(completed);
		}
		return null;
	}

	/**
	 * Completes the claims in the order a batch claim inserts and locks them (see
	 * {@link JdbcBatchClaims#INSERT_ORDER}), so that a completion never holds one row while
	 * it waits for another that a claim holds while it waits for the first.
	 * @return for each claim, in the order given, whether it was completed
	 */
	private boolean[] complete(List<ClaimRequest> requests, List<@Nullable String> responses, Fence fence) {
		List<Integer> order = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			order.add(i);
		}
		order.sort(Comparator.comparing(requests::get, JdbcBatchClaims.INSERT_ORDER));
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
		JdbcSteps steps = this.table.steps();
		if (steps.completesAllAtOnce() || requests.size() == 1) {
			return steps.completeAll(ids, owners, responses, retentions, fence);
		}
		if (fence == Fence.TRANSACTION) {
			// the caller's transaction holds the rows, and a completion fenced by it alone may be
			// made twice: when the counted statement missed a row (a savepoint rolled its claim
			// back), the JDBC batch below completes them again, each answered
			if (steps.countsCompletionsOf(responses)
					&& steps.completeCounted(ids, owners, responses, retentions, fence)) {
				return completedAll(ids.size());
			}
			return steps.completeAll(ids, owners, responses, retentions, fence);
		}
		if (steps.countsCompletionsOf(responses) && !this.transactions.isInTransaction()) {
			// one statement in a transaction of its own, kept when it completed every claim; else
			// rolled back (a claim lost to a takeover, or finished already), and done again below
			boolean all = this.transactions.inTransaction((status) -> {
				if (steps.completeCounted(ids, owners, responses, retentions, fence)) {
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
		return this.transactions.inTransaction((status) -> steps.completeAll(ids, owners, responses, retentions, fence));
	}

	private static boolean[] completedAll(int size) {
		boolean[] completed = new boolean[size];
		Arrays.fill(completed, true);
		return completed;
	}

	private static List<Boolean> completed(boolean[] completed) {
		List<Boolean> answers = new ArrayList<>(completed.length);
		for (boolean one : completed) {
			answers.add(one);
		}
		return answers;
	}

}
