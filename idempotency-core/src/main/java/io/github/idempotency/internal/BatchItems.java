package io.github.idempotency.internal;

import io.github.idempotency.observe.Outcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;

/**
 * The items of one batch ({@link BatchRun}), each a call of its own: its record and claim,
 * the first item of its key in the batch (the one claimed, which the others follow), and
 * how it is answered: run, answered with a stored result, following its key's first item,
 * skipped as failed before, or rejected.
 */
final class BatchItems {

	private static final Log logger = Protocol.logger;

	private final Protocol protocol;

	private final IdempotentOperation operation;

	private final String workflow;

	private final List<BatchItem> items;

	private final Item[] slots;

	BatchItems(Protocol protocol, IdempotentOperation operation, List<BatchItem> items) {
		this.protocol = protocol;
		this.operation = operation;
		this.workflow = operation.workflow();
		this.items = items;
		this.slots = new Item[items.size()];
	}

	/** The items' states, by position. */
	Item[] slots() {
		return this.slots;
	}

	/**
	 * Resolves every item's record and finds the first item of each key (the one that is
	 * claimed); an invalid key is rejected here.
	 * @return the positions of the first items of their keys
	 */
	List<Integer> identify() {
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
	 * Takes one claim's answer, other than "in progress".
	 */
	void take(Item item, Protocol.Answer answer) {
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
	void followLeaders() {
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

	void reject(Item item, IdempotencyException rejection) {
		item.state = State.REJECTED;
		item.rejection = rejection;
	}

	int count(State state) {
		int count = 0;
		for (Item item : this.slots) {
			count += (item.state == state) ? 1 : 0;
		}
		return count;
	}

	int[] positions(State state) {
		int[] positions = new int[count(state)];
		int next = 0;
		for (int i = 0; i < this.slots.length; i++) {
			if (this.slots[i].state == state) {
				positions[next++] = i;
			}
		}
		return positions;
	}

	List<@Nullable Object> answers() {
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

	/**
	 * The elements of the items at {@code positions}, as the batch method received them.
	 */
	List<@Nullable Object> elements(int[] positions) {
		List<@Nullable Object> received = new ArrayList<>(positions.length);
		for (int i : positions) {
			received.add(this.items.get(i).element());
		}
		return received;
	}

	/** The elements of the whole batch, in order. */
	List<@Nullable Object> originals() {
		List<@Nullable Object> originals = new ArrayList<>(this.items.size());
		for (BatchItem item : this.items) {
			originals.add(item.element());
		}
		return originals;
	}

	enum State {

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

	static final class Item {

		// id, request and rejection: set by the step that gives the item its state (identify,
		// reject) and read only in the states that step leads to
		@SuppressWarnings("NullAway.Init")
		RecordId id;

		@Nullable String fingerprint;

		@SuppressWarnings("NullAway.Init")
		ClaimRequest request;

		int leader = -1;

		State state = State.PENDING;

		@Nullable Outcome outcome;

		/** Set while the item runs under a claim (not when the batch runs unprotected). */
		@Nullable Execution execution;

		@Nullable Object result;

		@SuppressWarnings("NullAway.Init")
		IdempotencyException rejection;

		Execution claimed() {
			return Objects.requireNonNull(this.execution, "the item runs under no claim");
		}

		Outcome outcome() {
			return Objects.requireNonNull(this.outcome, "the item has no answer");
		}

	}

}
