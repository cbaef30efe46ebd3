package io.github.idempotency.internal;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordId;

/**
 * One call of {@link IdempotencyEngine#executeAll}: the batch shape of the protocol. Each
 * item is a call of its own: its claim's answer is the engine's ({@code answer}), its
 * ending is settled by {@link Settlement}, its outcome counted once. Only the batch's own
 * part lives here: the claims made together, the method called once with the items that
 * must run, a key named twice, and the failure of one item.
 */
final class BatchRun {

	private static final Log logger = Protocol.logger;

	private final Protocol protocol;

	private final Settlement settlement;

	private final IdempotentOperation operation;

	private final String workflow;

	private final List<BatchItem> items;

	private final BatchFailures failures;

	private final Item[] slots;

	BatchRun(Protocol protocol, IdempotentOperation operation, List<BatchItem> items, BatchFailures failures) {
		this.protocol = protocol;
		this.settlement = protocol.settlement();
		this.operation = operation;
		this.workflow = operation.workflow();
		this.items = items;
		this.failures = failures;
		this.slots = new Item[items.size()];
	}

	List<@Nullable Object> run(BatchAction action) throws Throwable {
		List<Integer> leaders = identify();
		if (!claim(leaders)) {
			return runUnprotected(leaders, action);
		}
		for (int i : leaders) {
			Item item = this.slots[i];
			if (item.state != State.PENDING) {
				this.protocol.ended(this.workflow, item.outcome);
			}
		}
		followLeaders();
		Throwable rejection = rejectFromFirstUnrunnable();
		int[] positions = positions(State.RUN);
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
					endings.add(this.settlement.returned(this.slots[positions[j]].execution, results[j]));
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
		return answers();
	}

	/**
	 * Resolves every item's record and finds the first item of each key (the one that is
	 * claimed); an invalid key is rejected here.
	 * @return the positions of the first items of their keys
	 */
	private List<Integer> identify() {
		Map<RecordId, Integer> leaders = new HashMap<>(2 * this.slots.length);
		List<Integer> claimed = new ArrayList<>();
		for (int i = 0; i < this.slots.length; i++) {
			BatchItem batchItem = this.items.get(i);
			Item item = new Item();
			this.slots[i] = item;
			try {
				if (batchItem.invalid() != null) {
					throw batchItem.invalid();
				}
				item.request = this.protocol.request(this.operation, this.protocol.id(this.workflow, batchItem.key()),
						batchItem.payload());
			}
			catch (IdempotencyException ex) {
				if (batchItem.invalid() != null) {
					this.protocol.ended(this.workflow, Outcome.INVALID_KEY);
				}
				reject(item, ex);
				continue;
			}
			item.id = item.request.id();
			item.fingerprint = item.request.fingerprint();
			Integer leader = leaders.putIfAbsent(item.id, i);
			item.leader = (leader != null) ? leader : i;
			if (leader == null) {
				claimed.add(i);
			}
		}
		return claimed;
	}

	/**
	 * Claims the given items, polling those in progress elsewhere as the operation says.
	 * While it waits, the batch holds no key: what a round acquired is given back and
	 * claimed again with the keys it waits for, so that two batches that hold each other's
	 * keys never wait for each other.
	 * @return {@code false} when the store failed and the batch runs unprotected
	 * (fail-open)
	 */
	private boolean claim(List<Integer> positions) {
		List<Integer> pending = positions;
		boolean[] conflicted = new boolean[this.slots.length];
		Backoff waiting = null;
		while (!pending.isEmpty()) {
			List<ClaimRequest> requests = new ArrayList<>(pending.size());
			for (int i : pending) {
				// a claim given back is claimed again under a new owner
				Item item = this.slots[i];
				item.request = (waiting != null) ? this.protocol.again(item.request) : item.request;
				requests.add(item.request);
			}
			List<ClaimResult> claims;
			try {
				claims = this.protocol.calls().step(StoreOperation.CLAIM, () -> this.protocol.store().claimAll(requests));
			}
			catch (IdempotencyInProgressException ex) {
				// the store cannot wait here (inside the caller's transaction): retry later
				giveBack();
				for (int i : pending) {
					if (!conflicted[i]) {
						this.protocol.observer().onConflict(this.workflow);
					}
					this.protocol.ended(this.workflow, Outcome.CONFLICT);
				}
				throw ex;
			}
			catch (RuntimeException ex) {
				giveBack();
				return storeUnavailable(ex);
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
					if (!conflicted[i]) {
						conflicted[i] = true;
						this.protocol.observer().onConflict(this.workflow);
					}
				}
				else {
					take(this.slots[i], answer);
				}
			}
			if (busy.isEmpty()) {
				return true;
			}
			if (waiting == null) {
				waiting = this.protocol.backoff(this.protocol.settings().waitTimeout());
			}
			List<Integer> given = giveBack();
			if (this.operation.onInProgress() == InProgressPolicy.REJECT || !waiting.await()) {
				busy.forEach((i) -> this.protocol.ended(this.workflow, Outcome.CONFLICT));
				throw new IdempotencyInProgressException(busy.size() + " idempotency key(s) of this batch of '"
						+ this.workflow + "' are being processed by another run; the batch was not run");
			}
			busy.addAll(given);
			busy.sort(null);
			pending = busy;
		}
		return true;
	}

	/**
	 * Takes one claim's answer, other than "in progress".
	 */
	private void take(Item item, Protocol.Answer answer) {
		item.outcome = answer.outcome();
		if (answer.execution() != null) {
			item.state = State.RUN;
			item.execution = answer.execution();
		}
		else if (answer.refusal() instanceof IdempotentFailureReplayedException failed) {
			item.state = State.SKIPPED;
			if (logger.isDebugEnabled()) {
				logger.debug("Skipping " + item.id + ": it failed permanently before (" + failed.getOriginalType()
						+ ")");
			}
		}
		else if (answer.refusal() != null) {
			reject(item, answer.refusal());
		}
		else {
			item.state = State.DONE;
			item.result = answer.result();
		}
	}

	/**
	 * A key named again in the batch follows its first item: not run, answered as it is.
	 */
	private void followLeaders() {
		for (int i = 0; i < this.slots.length; i++) {
			Item item = this.slots[i];
			if (item.state != State.PENDING || item.leader == i) {
				continue;
			}
			Item leader = this.slots[item.leader];
			if (leader.rejection != null) {
				this.protocol.ended(this.workflow, Outcome.MISMATCH);
				reject(item, leader.rejection);
			}
			else if (!Objects.equals(item.fingerprint, leader.fingerprint)) {
				this.protocol.ended(this.workflow, Outcome.MISMATCH);
				reject(item, new IdempotencyKeyReusedException("The idempotency key of '" + this.workflow
						+ "' is used twice in one batch with different payloads; the second was not run"));
			}
			else if (leader.state == State.SKIPPED) {
				this.protocol.ended(this.workflow, Outcome.FAILED);
				item.state = State.SKIPPED;
			}
			else {
				this.protocol.ended(this.workflow, Outcome.HIT);
				item.state = State.FOLLOWS;
			}
		}
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
			original = (original != null) ? original : originals();
			Throwable failure = this.failures.failAt(i, original, item.rejection);
			if (failure != null) {
				List<Execution> later = new ArrayList<>();
				for (int after = i + 1; after < this.slots.length; after++) {
					if (this.slots[after].state == State.RUN) {
						later.add(this.slots[after].execution);
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
		List<Object> received = new ArrayList<>(positions.length);
		for (int i : positions) {
			received.add(this.items.get(i).element());
		}
		int failed = this.failures.failedIndex(ex, received);
		List<Ending> endings = new ArrayList<>(positions.length);
		for (int j = 0; j < positions.length; j++) {
			Item item = this.slots[positions[j]];
			if (failed < 0 || failed >= positions.length) {
				endings.add(new Ending.Released(ex));
			}
			else if (j < failed) {
				item.result = results[j];
				endings.add(this.settlement.returned(item.execution, results[j]));
			}
			else if (j == failed) {
				endings.add(this.settlement.threw(item.execution, this.failures.cause(ex)));
			}
			else {
				endings.add(new Ending.Abandoned());
			}
		}
		addAll(ex, settle(positions, endings));
		if (failed < 0 || failed >= positions.length) {
			return ex;
		}
		Throwable translated = this.failures.translate(ex, positions[failed], originals());
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
			executions.add(this.slots[i].execution);
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
		int[] positions = positions(State.RUN);
		@Nullable Object[] results = new Object[positions.length];
		action.proceed(positions, results);
		for (int j = 0; j < positions.length; j++) {
			this.slots[positions[j]].result = results[j];
		}
		followLeaders();
		return answers();
	}

	private boolean storeUnavailable(RuntimeException ex) {
		for (Item item : this.slots) {
			if (item.state == State.PENDING) {
				this.protocol.ended(this.workflow, Outcome.STORE_ERROR);
			}
		}
		if (StoreErrors.isRefusal(ex)) {
			throw ex;
		}
		if (this.protocol.settings().storeUnavailable() == StoreUnavailablePolicy.FAIL_CLOSED) {
			throw new IdempotencyStoreException("The idempotency store could not claim a batch of '" + this.workflow
					+ "'; the batch was not run (idempotency.store-unavailable=fail-closed)", ex);
		}
		logger.warn("The idempotency store could not claim a batch of '" + this.workflow
				+ "'; running it unprotected (idempotency.store-unavailable=fail-open): " + ex);
		return false;
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
				executions.add(item.execution);
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

	private void reject(Item item, IdempotencyException rejection) {
		item.state = State.REJECTED;
		item.rejection = rejection;
	}

	private int[] positions(State state) {
		int count = 0;
		for (Item item : this.slots) {
			count += (item.state == state) ? 1 : 0;
		}
		int[] positions = new int[count];
		int next = 0;
		for (int i = 0; i < this.slots.length; i++) {
			if (this.slots[i].state == state) {
				positions[next++] = i;
			}
		}
		return positions;
	}

	private List<@Nullable Object> answers() {
		List<@Nullable Object> answers = new ArrayList<>(this.slots.length);
		for (Item item : this.slots) {
			answers.add(switch (item.state) {
				case RUN, DONE -> item.result;
				case FOLLOWS -> this.slots[item.leader].result;
				default -> null;
			});
		}
		return answers;
	}

	private List<@Nullable Object> originals() {
		List<@Nullable Object> originals = new ArrayList<>(this.items.size());
		for (BatchItem item : this.items) {
			originals.add(item.element());
		}
		return originals;
	}

	private enum State {

		/** Not claimed yet, or given back without running. */
		PENDING,

		/** Acquired: runs in this batch. */
		RUN,

		/** A duplicate: answered with the stored result. */
		DONE,

		/** The key's first item in this batch answers for it. */
		FOLLOWS,

		/** Failed permanently before: not run. */
		SKIPPED,

		/** Cannot run: invalid key or reused with another payload. */
		REJECTED

	}

	private static final class Item {

		RecordId id;

		@Nullable String fingerprint;

		ClaimRequest request;

		int leader = -1;

		State state = State.PENDING;

		@Nullable Outcome outcome;

		Execution execution;

		@Nullable Object result;

		IdempotencyException rejection;

	}

}
