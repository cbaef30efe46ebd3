package io.github.idempotency.internal;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.observe.Outcome;

/**
 * The one claim loop, which every shape of call runs ({@link SingleCall}, {@link BatchRun}):
 * a round claims what is still pending and takes each answer ({@code Protocol.answer});
 * while a key is in progress elsewhere, the call waits with one {@link Backoff} within the
 * wait timeout, or is rejected, as its {@link InProgressPolicy} says; a claim the store
 * fails ends the call with the store's refusal, refuses it (fail-closed) or lets it run
 * unprotected (fail-open), as {@link StoreUnavailablePolicy} says; a store that cannot wait
 * for a key in progress (inside the caller's transaction) ends the call in conflict at
 * once. What a round claims and what the call does with the answers are the shape's.
 * <p>
 * A call holds no key while it waits: a round that answers {@link #WAIT} has given back
 * whatever it acquired. The loop is driven by a thread that sleeps on the engine's time
 * between rounds ({@link #claimed}), or by timers that hold no thread ({@link #pause}).
 */
abstract class ClaimLoop {

	private static final Log logger = Protocol.logger;

	/** What a round answers when the call is to claim again after a {@link #pause}. */
	static final Object WAIT = new Object();

	final Protocol protocol;

	final IdempotentOperation operation;

	/** The call's wait, from the first answer "in progress" on. */
	private @Nullable Backoff waiting;

	ClaimLoop(Protocol protocol, IdempotentOperation operation) {
		this.protocol = protocol;
		this.operation = operation;
	}

	/**
	 * One round: claims what is pending and takes the answers.
	 * @return the call's answer, or {@link #WAIT} when keys are in progress elsewhere (none
	 * of the call's claims held)
	 */
	abstract @Nullable Object round() throws Throwable;

	/**
	 * The call ends in conflict, its keys still in progress elsewhere ({@link #conflict}).
	 * @return the exception to throw
	 */
	abstract IdempotencyInProgressException rejected();

	/**
	 * Claims until the call is answered, sleeping on the engine's time between rounds.
	 * @return the call's answer
	 */
	final @Nullable Object claimed() throws Throwable {
		while (true) {
			Object answered = round();
			if (answered != WAIT) {
				return answered;
			}
			if (!this.protocol.time().sleep(pause())) {
				throw rejected();
			}
		}
	}

	/**
	 * The pause before the next round, after one that answered {@link #WAIT}.
	 * @return the pause in nanoseconds
	 * @throws IdempotencyInProgressException when the call is not to wait (the policy is
	 * {@code REJECT}, or the wait timeout is spent)
	 */
	final long pause() {
		long pause = (this.operation.onInProgress() == InProgressPolicy.REJECT || this.waiting == null) ? -1
				: this.waiting.next();
		if (pause < 0) {
			throw rejected();
		}
		return pause;
	}

	/**
	 * Whether a key of this call was answered "in progress": its next claims are claims
	 * again.
	 */
	final boolean waited() {
		return this.waiting != null;
	}

	/**
	 * A key of this call was answered "in progress": a conflict, counted the first time it
	 * happens to that key; the call's wait begins with its first.
	 * @param first whether the key was not in progress before
	 */
	final void inProgress(boolean first) {
		if (first) {
			this.protocol.observer().onConflict(this.operation.workflow());
		}
		if (this.waiting == null) {
			this.waiting = Backoff.within(this.protocol.time(), this.protocol.settings().waitTimeout());
		}
	}

	/**
	 * The store cannot wait for a key in progress here (it threw an
	 * {@link IdempotencyInProgressException} inside the caller's transaction, where the engine
	 * never waits): the key's call ends in conflict now, for its caller to retry later. The
	 * shape rethrows the store's exception.
	 * @param first whether the key was not in progress before
	 */
	final void cannotWait(boolean first) {
		if (first) {
			this.protocol.observer().onConflict(this.operation.workflow());
		}
		this.protocol.ended(this.operation.workflow(), Outcome.CONFLICT);
	}

	/**
	 * The store failed a round's claims: each of its {@code calls} ends as
	 * {@code store_error}; a refusal of the store is rethrown; fail-closed, the call is
	 * refused; fail-open, it runs unprotected, which the shape does once this returns.
	 * @param failure what the store threw
	 * @param calls how many calls end so
	 * @param what what could not be claimed, as the messages name it
	 * @param run what is not run, or runs unprotected, as the messages name it
	 * @throws RuntimeException the store's refusal, or an {@link IdempotencyStoreException}
	 */
	final void unavailable(RuntimeException failure, int calls, String what, String run) {
		for (int i = 0; i < calls; i++) {
			this.protocol.ended(this.operation.workflow(), Outcome.STORE_ERROR);
		}
		if (StoreErrors.isRefusal(failure)) {
			throw failure;
		}
		if (this.protocol.settings().storeUnavailable() == StoreUnavailablePolicy.FAIL_CLOSED) {
			throw new IdempotencyStoreException("The idempotency store could not claim " + what + "; " + run
					+ " was not run (idempotency.store-unavailable=fail-closed)", failure);
		}
		logger.warn("The idempotency store could not claim " + what + "; running " + run
				+ " unprotected (idempotency.store-unavailable=fail-open): " + failure);
	}

	/**
	 * The call ends in conflict.
	 * @param keys how many of its keys are still in progress elsewhere, each counted
	 * @param message the exception's message
	 * @return the exception to throw
	 */
	final IdempotencyInProgressException conflict(int keys, String message) {
		for (int i = 0; i < keys; i++) {
			this.protocol.ended(this.operation.workflow(), Outcome.CONFLICT);
		}
		return new IdempotencyInProgressException(message);
	}

}
