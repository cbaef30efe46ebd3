package io.github.idempotency.internal;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.observe.StoreOperation;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.internal.BatchItems.Item;
import io.github.idempotency.internal.BatchItems.State;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;

/**
 * One call of {@link IdempotencyEngine#executeAll}: the batch shape of the protocol. Each
 * item is a call of its own: its claim's answer is the engine's ({@code answer}), its
 * ending is settled by {@link Settlement}, its outcome counted once, its wait the
 * {@link ClaimLoop}'s. Only the batch's own part lives here: the claims made together, the
 * method called once with the items that must run, a key named twice ({@link BatchItems}),
 * and the failure of one item.
 */
final class BatchRun extends ClaimLoop {

	private static final Log logger = Protocol.logger;

	/** A round's answer: every pending item answered. */
	private static final Object CLAIMED = new Object();

	/** A round's answer: the store failed, the batch runs unprotected (fail-open). */
	private static final Object UNPROTECTED = new Object();

	private final Settlement settlement;

	private final String workflow;

	private final BatchItems items;

	private final BatchFailures failures;

	private final Item[] slots;

	/** The items the next round claims. */
	private List<Integer> pending = List.of();

	/** Which items were answered "in progress". */
	private boolean[] conflicted = new boolean[0];

	/** How many items the last round found in progress elsewhere. */
	private int busy;

	BatchRun(Protocol protocol, IdempotentOperation operation, List<BatchItem> items, BatchFailures failures) {
		super(protocol, operation);
		this.settlement = protocol.settlement();
		this.workflow = operation.workflow();
		this.items = new BatchItems(protocol, operation, items);
		this.failures = failures;
		this.slots = this.items.slots();
	}

	List<@Nullable Object> run(BatchAction action) throws Throwable {
		List<Integer> leaders = this.items.identify();
		this.pending = leaders;
		this.conflicted = new boolean[this.slots.length];
		if (claimed() == UNPROTECTED) {
			return runUnprotected(leaders, action);
		}
		for (int i : leaders) {
			Item item = this.slots[i];
			if (item.state != State.PENDING) {
				this.protocol.ended(this.workflow, item.outcome());
			}
		}
		this.items.followLeaders();
		Throwable rejection = rejectFromFirstUnrunnable();
		int[] positions = this.items.positions(State.RUN);
		if (positions.length > 0) {
			@Nullable Object[] results = new Object[positions.length];
			int ran = positions.length;
			try {
				action.proceed(positions, results);
			}
			catch (RedeliveryRequested ex) {
				// the elements from there on are delivered again: given back, not completed
				ran = Math.max(0, Math.min(ex.from(), positions.length));
			}
			catch (Throwable ex) {
				throw failed(ex, positions, results);
			}
			List<Ending> endings = new ArrayList<>(positions.length);
			for (int j = 0; j < positions.length; j++) {
				if (j < ran) {
					this.slots[positions[j]].result = results[j];
					endings.add(this.settlement.returned(this.slots[positions[j]].claimed(), results[j]));
				}
				else {
					endings.add(new Ending.Abandoned());
				}
			}
			RuntimeException notStored = first(settle(positions, endings));
			if (notStored != null) {
				throw notStored;
			}
		}
		if (rejection != null) {
			throw rejection;
		}
		return this.items.answers();
	}

	/**
	 * One round of the batch's claims: the pending items claimed together, polled while in
	 * progress elsewhere as the {@link ClaimLoop} says. While it waits, the batch holds no
	 * key: what a round acquired is given back and claimed again with the keys it waits
	 * for, so that two batches that hold each other's keys never wait for each other.
	 * @return {@link #CLAIMED}, {@link #UNPROTECTED} when the store failed and the batch runs
	 * unprotected (fail-open), or {@link #WAIT}
	 */
	@Override
	Object round() {
		List<Integer> pending = this.pending;
		if (pending.isEmpty()) {
			return CLAIMED;
		}
		boolean again = waited();
		List<ClaimRequest> requests = new ArrayList<>(pending.size());
		for (int i : pending) {
			// a claim given back is claimed again under a new owner
			Item item = this.slots[i];
			item.request = again ? this.protocol.again(item.request) : item.request;
			requests.add(item.request);
		}
		List<ClaimResult> claims;
		try {
			claims = this.protocol.calls().step(StoreOperation.CLAIM, () -> this.protocol.store().claimAll(requests));
		}
		catch (IdempotencyInProgressException ex) {
			giveBack();
			for (int i : pending) {
				cannotWait(!this.conflicted[i]);
			}
			throw ex;
		}
		catch (RuntimeException ex) {
			giveBack();
			unavailable(ex, this.items.count(State.PENDING), "a batch of '" + this.workflow + "'", "the batch");
			return UNPROTECTED;
		}
		List<Integer> busy = new ArrayList<>();
		for (int j = 0; j < pending.size(); j++) {
			int i = pending.get(j);
			Protocol.Answer answer;
			try {
				answer = this.protocol.answer(this.operation, requests.get(j), claims.get(j));
			}
			catch (RuntimeException ex) {
				// the claims not looked at yet are given back too
				for (ClaimResult later : claims.subList(j + 1, claims.size())) {
					if (later.handle() != null) {
						later.handle().abandon();
					}
				}
				giveBack();
				throw ex;
			}
			if (answer.inProgress()) {
				busy.add(i);
				inProgress(!this.conflicted[i]);
				this.conflicted[i] = true;
			}
			else {
				this.items.take(this.slots[i], answer);
			}
		}
		if (busy.isEmpty()) {
			return CLAIMED;
		}
		this.busy = busy.size();
		busy.addAll(giveBack());
		busy.sort(null);
		this.pending = busy;
		return WAIT;
	}

	@Override
	IdempotencyInProgressException rejected() {
		return conflict(this.busy, this.busy + " idempotency key(s) of this batch of '" + this.workflow
				+ "' are being processed by another run; the batch was not run");
	}

	/**
	 * Fails the batch at its first item that cannot run, when the caller's framework can say
	 * so: the items after it are given back, not run. Without such a mechanism, those items
	 * are skipped with a WARN.
	 * @return the exception to throw once the items before it ran, or {@code null}
	 */
	private @Nullable Throwable rejectFromFirstUnrunnable() {
		List<?> original = null;
		for (int i = 0; i < this.slots.length; i++) {
			Item item = this.slots[i];
			if (item.state != State.REJECTED) {
				continue;
			}
			original = (original != null) ? original : this.items.originals();
			Throwable failure = this.failures.failAt(i, original, item.rejection);
			if (failure != null) {
				List<Execution> later = new ArrayList<>();
				for (int after = i + 1; after < this.slots.length; after++) {
					if (this.slots[after].state == State.RUN) {
						later.add(this.slots[after].claimed());
						this.slots[after].state = State.PENDING;
					}
				}
				addAll(failure, this.settlement.giveBack(later));
				return failure;
			}
			logger.warn("Skipping item " + i + " of a batch of '" + this.workflow + "': " + item.rejection.getMessage());
		}
		return null;
	}

	/**
	 * The batch method threw: the items before the failed one (if the failure names one)
	 * are completed, the failed one is settled by its cause, and the rest, which never ran,
	 * are given back. A failure that names no item settles every item as it does a single
	 * call's.
	 * @return what to throw
	 */
	private Throwable failed(Throwable ex, int[] positions, @Nullable Object[] results) {
		int failed = this.failures.failedIndex(ex, this.items.elements(positions));
		List<Ending> endings = new ArrayList<>(positions.length);
		for (int j = 0; j < positions.length; j++) {
			Item item = this.slots[positions[j]];
			if (failed < 0 || failed >= positions.length) {
				endings.add(new Ending.Released(ex));
			}
			else if (j < failed) {
				item.result = results[j];
				endings.add(this.settlement.returned(item.claimed(), results[j]));
			}
			else if (j == failed) {
				endings.add(this.settlement.threw(item.claimed(), this.failures.cause(ex)));
			}
			else {
				endings.add(new Ending.Abandoned());
			}
		}
		addAll(ex, settle(positions, endings));
		if (failed < 0 || failed >= positions.length) {
			return ex;
		}
		Throwable translated = this.failures.translate(ex, positions[failed], this.items.originals());
		if (translated != ex) {
			for (Throwable suppressed : ex.getSuppressed()) {
				translated.addSuppressed(suppressed);
			}
		}
		return translated;
	}

	private @Nullable RuntimeException[] settle(int[] positions, List<Ending> endings) {
		List<Execution> executions = new ArrayList<>(positions.length);
		for (int i : positions) {
			executions.add(this.slots[i].claimed());
		}
		return this.settlement.settleAll(executions, endings);
	}

	private static void addAll(Throwable failure, @Nullable RuntimeException[] problems) {
		for (RuntimeException problem : problems) {
			if (problem != null && problem != failure
					&& !List.of(failure.getSuppressed()).contains(problem)) {
				Settlement.notFinished(failure, problem);
			}
		}
	}

	private static @Nullable RuntimeException first(@Nullable RuntimeException[] problems) {
		RuntimeException first = null;
		for (RuntimeException problem : problems) {
			if (problem != null && first == null) {
				first = problem;
			}
		}
		if (first != null) {
			addAll(first, problems);
		}
		return first;
	}

	private List<@Nullable Object> runUnprotected(List<Integer> leaders, BatchAction action)
			throws Throwable {
		for (int i : leaders) {
			if (this.slots[i].state == State.PENDING) {
				this.slots[i].state = State.RUN;
			}
		}
		int[] positions = this.items.positions(State.RUN);
		@Nullable Object[] results = new Object[positions.length];
		action.proceed(positions, results);
		for (int j = 0; j < positions.length; j++) {
			this.slots[positions[j]].result = results[j];
		}
		this.items.followLeaders();
		return this.items.answers();
	}

	/**
	 * Gives back every claim the batch holds, for items that never ran.
	 * @return their positions, now pending again
	 */
	private List<Integer> giveBack() {
		List<Integer> given = new ArrayList<>();
		List<Execution> executions = new ArrayList<>();
		for (int i = 0; i < this.slots.length; i++) {
			Item item = this.slots[i];
			if (item.state == State.RUN) {
				given.add(i);
				executions.add(item.claimed());
				item.state = State.PENDING;
				item.execution = null;
			}
		}
		for (RuntimeException problem : this.settlement.giveBack(executions)) {
			if (problem != null) {
				logger.warn("Could not give back a claim of a batch of '" + this.workflow + "': " + problem.getMessage());
			}
		}
		return given;
	}

}
