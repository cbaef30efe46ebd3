package io.github.idempotency.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;

/**
 * One call of {@link IdempotencyEngine#executeAll}: the protocol of the single call, item
 * by item, with the claims of the batch made together and the method called once.
 */
final class BatchRun {

	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyEngine engine;

	private final IdempotentOperation operation;

	private final String workflow;

	private final List<BatchItem> items;

	private final BatchFailures failures;

	private final Item[] slots;

	BatchRun(IdempotencyEngine engine, IdempotentOperation operation, List<BatchItem> items, BatchFailures failures) {
		this.engine = engine;
		this.operation = operation;
		this.workflow = operation.workflow();
		this.items = items;
		this.failures = failures;
		this.slots = new Item[items.size()];
	}

	List<@Nullable Object> run(IdempotencyEngine.BatchAction action) throws Throwable {
		List<Integer> leaders = identify();
		if (!claim(leaders)) {
			return runUnprotected(leaders, action);
		}
		followLeaders();
		Throwable rejection = rejectFromFirstUnrunnable();
		int[] positions = positions(State.RUN);
		@Nullable Object[] results = new Object[positions.length];
		if (positions.length > 0) {
			try {
				action.proceed(positions, results);
			}
			catch (Throwable ex) {
				throw failed(ex, positions, results);
			}
			complete(positions, results);
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
		Map<RecordId, Integer> leaders = new HashMap<>();
		List<Integer> claimed = new ArrayList<>();
		for (int i = 0; i < this.slots.length; i++) {
			BatchItem batchItem = this.items.get(i);
			Item item = new Item();
			this.slots[i] = item;
			try {
				item.id = new RecordId(this.workflow, this.engine.keys().toKey(this.workflow, batchItem.key()));
			}
			catch (IdempotencyException ex) {
				this.engine.ended(this.workflow, Outcome.INVALID_KEY);
				reject(item, ex);
				continue;
			}
			item.fingerprint = this.operation.fingerprinted() ? this.engine.fingerprints().of(batchItem.payload())
					: null;
			Integer leader = leaders.putIfAbsent(item.id, i);
			if (leader == null) {
				item.leader = i;
				claimed.add(i);
			}
			else {
				item.leader = leader;
			}
		}
		return claimed;
	}

	/**
	 * Claims the given items, polling those in progress elsewhere as the operation says.
	 * @return {@code false} when the store failed and the batch runs unprotected
	 * (fail-open)
	 */
	private boolean claim(List<Integer> positions) {
		List<Integer> pending = positions;
		boolean[] conflicted = new boolean[this.slots.length];
		long deadline = 0;
		long backoff = IdempotencyEngine.firstBackoff();
		while (!pending.isEmpty()) {
			List<ClaimRequest> requests = new ArrayList<>(pending.size());
			for (int i : pending) {
				requests.add(new ClaimRequest(this.slots[i].id, this.engine.nextOwner(), this.slots[i].fingerprint,
						this.operation.leaseTtl(), this.operation.retention()));
			}
			List<ClaimResult> claims;
			long start = System.nanoTime();
			try {
				claims = this.engine.store().claimAll(requests);
				this.engine.observer().onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, true);
			}
			catch (IdempotencyInProgressException ex) {
				// the store cannot wait here (inside the caller's transaction): retry later
				this.engine.observer().onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, true);
				releaseAcquired(ex);
				for (int i : pending) {
					if (!conflicted[i]) {
						this.engine.observer().onConflict(this.workflow);
					}
					this.engine.ended(this.workflow, Outcome.CONFLICT);
				}
				throw ex;
			}
			catch (RuntimeException ex) {
				this.engine.observer().onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, false);
				releaseAcquired(ex);
				return storeUnavailable(ex);
			}
			List<Integer> waiting = new ArrayList<>();
			for (int j = 0; j < pending.size(); j++) {
				int i = pending.get(j);
				try {
					if (accept(this.slots[i], requests.get(j), claims.get(j))) {
						waiting.add(i);
						if (!conflicted[i]) {
							conflicted[i] = true;
							this.engine.observer().onConflict(this.workflow);
						}
					}
				}
				catch (RuntimeException ex) {
					// the claims not looked at yet are released too
					for (ClaimResult later : claims.subList(j + 1, claims.size())) {
						if (later.handle() != null) {
							later.handle().release(ex);
						}
					}
					throw ex;
				}
			}
			if (!waiting.isEmpty()) {
				if (deadline == 0) {
					deadline = System.nanoTime() + this.engine.settings().waitTimeout().toNanos();
				}
				long remaining = deadline - System.nanoTime();
				if (this.operation.onInProgress() == InProgressPolicy.REJECT || remaining <= 0
						|| !IdempotencyEngine.pauseFor(Math.min(backoff, remaining))) {
					IdempotencyInProgressException ex = new IdempotencyInProgressException(waiting.size()
							+ " idempotency key(s) of this batch of '" + this.workflow
							+ "' are being processed by another run; the batch was not run");
					releaseAcquired(ex);
					waiting.forEach((i) -> this.engine.ended(this.workflow, Outcome.CONFLICT));
					throw ex;
				}
				backoff = Math.min(backoff * 2, IdempotencyEngine.maxBackoff());
			}
			pending = waiting;
		}
		return true;
	}

	/**
	 * Takes one claim's answer.
	 * @return {@code true} when the key is in progress elsewhere
	 */
	private boolean accept(Item item, ClaimRequest request, ClaimResult claim) {
		IdempotencyRecord record = claim.record();
		switch (claim.outcome()) {
			case ACQUIRED -> {
				if (claim.isTakeover()) {
					this.engine.observer().onTakeover(this.workflow);
					logger.info("Taking over " + item.id + " (attempt " + record.attempt() + ") after its lease ran out");
				}
				this.engine.ended(this.workflow, Outcome.MISS);
				item.state = State.RUN;
				item.handle = claim.acquiredHandle();
				item.execution = new Execution(this.engine, this.operation, item.id, item.handle, request.owner(),
						record);
				item.lease = this.engine.register(item.execution, item.handle);
			}
			case DUPLICATE -> {
				try {
					item.result = this.operation.codec().read(record.response());
				}
				catch (RuntimeException ex) {
					this.engine.ended(this.workflow, Outcome.STORE_ERROR);
					IdempotencyStoreException failure = new IdempotencyStoreException("The stored result of " + item.id
							+ " cannot be read as " + this.operation.codec().type() + ": " + ex.getMessage(), ex);
					releaseAcquired(failure);
					throw failure;
				}
				this.engine.ended(this.workflow, Outcome.HIT);
				item.state = State.DONE;
			}
			case FAILED -> {
				this.engine.ended(this.workflow, Outcome.FAILED);
				item.state = State.SKIPPED;
				if (logger.isDebugEnabled()) {
					logger.debug("Skipping " + item.id + ": it failed permanently before (" + record.errorType() + ")");
				}
			}
			case MISMATCH -> {
				this.engine.ended(this.workflow, Outcome.MISMATCH);
				reject(item, new IdempotencyKeyReusedException("The idempotency key of '" + this.workflow
						+ "' was used before with a different payload; the operation was not run"));
			}
			case IN_PROGRESS -> {
				return true;
			}
		}
		return false;
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
				this.engine.ended(this.workflow, Outcome.MISMATCH);
				reject(item, leader.rejection);
			}
			else if (!Objects.equals(item.fingerprint, leader.fingerprint)) {
				this.engine.ended(this.workflow, Outcome.MISMATCH);
				reject(item, new IdempotencyKeyReusedException("The idempotency key of '" + this.workflow
						+ "' is used twice in one batch with different payloads; the second was not run"));
			}
			else if (leader.state == State.SKIPPED) {
				this.engine.ended(this.workflow, Outcome.FAILED);
				item.state = State.SKIPPED;
			}
			else {
				this.engine.ended(this.workflow, Outcome.HIT);
				item.state = State.FOLLOWS;
			}
		}
	}

	/**
	 * Fails the batch at its first item that cannot run, when the caller's framework can say
	 * so: the items after it are released, not run. Without such a mechanism, those items
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
				for (int after = i + 1; after < this.slots.length; after++) {
					Item later = this.slots[after];
					if (later.state == State.RUN) {
						release(later, failure);
						later.state = State.PENDING;
					}
				}
				return failure;
			}
			logger.warn("Skipping item " + i + " of a batch of '" + this.workflow + "': " + item.rejection.getMessage());
		}
		return null;
	}

	/**
	 * The batch method threw: the items before the failed one (if the failure names one)
	 * are completed, the failed one is failed or released, the rest released.
	 * @return what to throw
	 */
	private Throwable failed(Throwable ex, int[] positions, @Nullable Object[] results) {
		List<Object> received = new ArrayList<>(positions.length);
		for (int i : positions) {
			received.add(this.items.get(i).element());
		}
		int failed = this.failures.failedIndex(ex, received);
		if (failed < 0 || failed >= positions.length) {
			for (int i : positions) {
				this.engine.cancel(this.slots[i].lease);
				this.engine.endings().finishAfterFailure(this.slots[i].execution, this.slots[i].handle, ex, false);
			}
			return ex;
		}
		try {
			complete(Arrays.copyOf(positions, failed), results);
		}
		catch (RuntimeException completion) {
			ex.addSuppressed(completion);
		}
		Item item = this.slots[positions[failed]];
		this.engine.cancel(item.lease);
		this.engine.endings().finishAfterFailure(item.execution, item.handle, this.failures.cause(ex));
		for (int j = failed + 1; j < positions.length; j++) {
			Item later = this.slots[positions[j]];
			this.engine.cancel(later.lease);
			this.engine.endings().finishAfterFailure(later.execution, later.handle, ex, false);
		}
		Throwable translated = this.failures.translate(ex, positions[failed], originals());
		if (translated != ex) {
			for (Throwable suppressed : ex.getSuppressed()) {
				translated.addSuppressed(suppressed);
			}
		}
		return translated;
	}

	/**
	 * Completes the items that ran, in one store call; a lost lease of one does not keep
	 * the others from completing, and is thrown after (a result that cannot be written
	 * likewise).
	 */
	private void complete(int[] positions, @Nullable Object[] results) {
		RuntimeException first = null;
		List<Execution> executions = new ArrayList<>(positions.length);
		List<ClaimHandle> handles = new ArrayList<>(positions.length);
		List<@Nullable String> responses = new ArrayList<>(positions.length);
		for (int j = 0; j < positions.length; j++) {
			Item item = this.slots[positions[j]];
			this.engine.cancel(item.lease);
			try {
				item.result = results[j];
				responses.add(this.operation.codec().write(results[j]));
				executions.add(item.execution);
				handles.add(item.handle);
			}
			catch (RuntimeException ex) {
				first = addTo(first, ex);
			}
		}
		if (!handles.isEmpty()) {
			try {
				for (RuntimeException ex : this.engine.endings().completeAll(executions, handles, responses)) {
					if (ex != null) {
						first = addTo(first, ex);
					}
				}
			}
			catch (RuntimeException ex) {
				first = addTo(first, ex);
			}
		}
		if (first != null) {
			throw first;
		}
	}

	private static RuntimeException addTo(@Nullable RuntimeException first, RuntimeException ex) {
		if (first == null) {
			return ex;
		}
		first.addSuppressed(ex);
		return first;
	}

	private List<@Nullable Object> runUnprotected(List<Integer> leaders, IdempotencyEngine.BatchAction action)
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
				this.engine.ended(this.workflow, Outcome.STORE_ERROR);
			}
		}
		if (IdempotencyEngine.isRefusal(ex)) {
			throw ex;
		}
		if (this.engine.settings().storeUnavailable() == StoreUnavailablePolicy.FAIL_CLOSED) {
			throw new IdempotencyStoreException("The idempotency store could not claim a batch of '" + this.workflow
					+ "'; the batch was not run (idempotency.store-unavailable=fail-closed)", ex);
		}
		logger.warn("The idempotency store could not claim a batch of '" + this.workflow
				+ "'; running it unprotected (idempotency.store-unavailable=fail-open): " + ex);
		return false;
	}

	private void releaseAcquired(Throwable reason) {
		for (Item item : this.slots) {
			if (item.state == State.RUN) {
				release(item, reason);
				item.state = State.PENDING;
			}
		}
	}

	private void release(Item item, Throwable reason) {
		this.engine.cancel(item.lease);
		this.engine.endings().finishAfterFailure(item.execution, item.handle, reason, false);
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

		/** Not claimed yet, or released without running. */
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

		int leader = -1;

		State state = State.PENDING;

		ClaimHandle handle;

		Execution execution;

		LeaseRenewer.@Nullable Lease lease;

		@Nullable Object result;

		IdempotencyException rejection;

	}

}
