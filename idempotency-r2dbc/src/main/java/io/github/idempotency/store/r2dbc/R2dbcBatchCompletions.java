package io.github.idempotency.store.r2dbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.Fence;

/**
 * The batch completion, as the jdbc store's: the claims of one batch completed in one round
 * trip when they are all this store's claims of one kind (held by their leases, or by the
 * caller's transaction): one statement over arrays (PostgreSQL), or one statement that
 * counts what it completed (MariaDB; for leased claims in a transaction of its own, kept
 * only when it completed them all, else rolled back and the claims completed one by one).
 */
final class R2dbcBatchCompletions {

	private final R2dbcRecordTable table;

	private final R2dbcTransactions transactions;

	R2dbcBatchCompletions(R2dbcRecordTable table, R2dbcTransactions transactions) {
		this.table = table;
		this.transactions = transactions;
	}

	/**
	 * @return for each handle whether it was completed, or {@code null} when the handles
	 * are not all of one such kind
	 */
	@Nullable Mono<List<Boolean>> completeAll(List<ReactiveClaimHandle> handles, List<@Nullable String> responses) {
		if (handles.isEmpty()) {
			return Mono.just(List.of());
		}
		if (handles.stream().allMatch((handle) -> handle instanceof LeasedR2dbcClaim leased && leased.table() == this.table)) {
			List<ClaimRequest> requests = handles.stream().map((handle) -> ((LeasedR2dbcClaim) handle).request()).toList();
			return complete(requests, responses, Fence.LEASE).map(R2dbcBatchCompletions::completed);
		}
		if (!handles.stream()
			.allMatch((handle) -> handle instanceof TransactionalR2dbcClaim joined && joined.table() == this.table)) {
			return null;
		}
		List<ClaimRequest> requests = new ArrayList<>();
		List<@Nullable String> stored = new ArrayList<>();
		List<Integer> positions = new ArrayList<>();
		for (int i = 0; i < handles.size(); i++) {
			if (responses.get(i) != null) {
				requests.add(((TransactionalR2dbcClaim) handles.get(i)).request());
				stored.add(responses.get(i));
				positions.add(i);
			}
		}
		boolean[] completed = new boolean[handles.size()];
		Arrays.fill(completed, true);
		if (requests.isEmpty()) {
			// their records were written finished by their claims
			return Mono.just(completed(completed));
		}
		return complete(requests, stored, Fence.TRANSACTION).map((updated) -> {
			for (int j = 0; j < updated.length; j++) {
				completed[positions.get(j)] = updated[j];
			}
			return completed(completed);
		});
	}

	/**
	 * Completes the claims in the order a batch claim inserts and locks them, so that a
	 * completion never holds one row while it waits for another that a claim holds while it
	 * waits for the first.
	 * @return for each claim, in the order given, whether it was completed
	 */
	private Mono<boolean[]> complete(List<ClaimRequest> requests, List<@Nullable String> responses, Fence fence) {
		List<Integer> order = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			order.add(i);
		}
		order.sort(Comparator.comparing(requests::get, R2dbcBatchClaims.INSERT_ORDER));
		return completeInOrder(order.stream().map(requests::get).toList(), order.stream().map(responses::get).toList(),
				fence)
			.map((sorted) -> {
				boolean[] completed = new boolean[sorted.length];
				for (int j = 0; j < sorted.length; j++) {
					completed[order.get(j)] = sorted[j];
				}
				return completed;
			});
	}

	private Mono<boolean[]> completeInOrder(List<ClaimRequest> requests, List<@Nullable String> responses, Fence fence) {
		List<RecordId> ids = requests.stream().map(ClaimRequest::id).toList();
		List<String> owners = requests.stream().map(ClaimRequest::owner).toList();
		List<Duration> retentions = requests.stream().map(ClaimRequest::retention).toList();
		R2dbcSteps steps = this.table.steps();
		if (steps.completesAllAtOnce()) {
			return steps.completeAll(ids, owners, responses, retentions, fence);
		}
		Mono<boolean[]> oneByOne = Flux.range(0, ids.size())
			.concatMap((i) -> steps.complete(ids.get(i), owners.get(i), responses.get(i), retentions.get(i), fence))
			.collectList()
			.map((answers) -> {
				boolean[] completed = new boolean[answers.size()];
				for (int i = 0; i < completed.length; i++) {
					completed[i] = answers.get(i);
				}
				return completed;
			});
		if (ids.size() == 1 || !steps.countsCompletionsOf(responses)) {
			return oneByOne;
		}
		Mono<Boolean> all = steps.completeCounted(ids, owners, responses, retentions, fence);
		if (fence == Fence.LEASE) {
			// in a transaction of its own, kept when it completed every claim; else rolled back
			// (a claim lost to a takeover, or finished already), and done again one by one
			all = this.transactions.inOwnTransaction(
					all.flatMap((every) -> every ? Mono.just(true) : Mono.error(new MissedCompletion())))
				.onErrorResume(MissedCompletion.class, (ex) -> Mono.just(false));
		}
		// inside the caller's transaction a completion fenced by it alone may be made twice
		return all.flatMap((every) -> every ? Mono.just(completedAll(ids.size())) : oneByOne);
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

	/** Rolls back a counted completion that missed a claim. */
	private static final class MissedCompletion extends RuntimeException {

		MissedCompletion() {
			super(null, null, false, false);
		}

	}

}
