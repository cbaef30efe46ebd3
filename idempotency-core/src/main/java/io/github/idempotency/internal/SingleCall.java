package io.github.idempotency.internal;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.internal.IdempotencyEngine.Action;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordId;

/**
 * The single-call shape (as {@link BatchRun} is the batch's): one call's claims in the
 * {@link ClaimLoop}, each answered once ({@code Protocol.answer}); an acquired claim run
 * with its lease renewed and settled ({@link Settlement}), now or, for an asynchronous
 * result, once it settles; a duplicate's stored result; a refusal thrown; the wait for a run
 * of the same key elsewhere driven by a caller that sleeps ({@link #execute}) or one that
 * sets a timer ({@link AsyncSingleCall}).
 */
final class SingleCall extends ClaimLoop {

	private static final Log logger = Protocol.logger;

	private final RecordId id;

	final ClaimRequest request;

	private final Action action;

	private int attempt;

	/** The caller's Reactor context, which a {@code Mono} result is subscribed with; {@code null} for none. */
	private final @Nullable Object context;

	SingleCall(Protocol protocol, IdempotentOperation operation, RecordId id, @Nullable Object payload, Action action) {
		this(protocol, operation, id, payload, action, null);
	}

	SingleCall(Protocol protocol, IdempotentOperation operation, RecordId id, @Nullable Object payload, Action action,
			@Nullable Object context) {
		super(protocol, operation);
		this.context = context;
		String workflow = operation.workflow();
		if (operation.async() != null && Transactions.isActive()) {
			throw new IllegalStateException("The asynchronous idempotent operation '" + workflow + "' is called "
					+ "inside a transaction, which would end before its result is known: call it outside any "
					+ "transaction");
		}
		this.id = id;
		this.request = protocol.request(operation, id, payload);
		this.action = action;
	}

	/**
	 * One claim and what it answers: this run's result, a stored one, a refusal thrown,
	 * or {@link #WAIT}.
	 */
	@Override
	@Nullable Object round() throws Throwable {
		ClaimResult claim;
		try {
			claim = this.protocol.calls().step(StoreOperation.CLAIM, () -> this.protocol.store().claim(this.request));
		}
		catch (RuntimeException ex) {
			return claimFailed(ex);
		}
		return take(claim);
	}

	/**
	 * The store failed the claim: a store that cannot wait inside the caller's transaction
	 * ends the call in conflict; any other failure is the store's refusal, fail-closed or
	 * fail-open.
	 */
	@Nullable Object claimFailed(RuntimeException failure) throws Throwable {
		if (failure instanceof IdempotencyInProgressException) {
			cannotWait(!waited());
			throw failure;
		}
		unavailable(failure, 1, this.id.toString(), "the operation");
		return runUnprotected();
	}

	/** The claim's answer: this run's result, a stored one, a refusal thrown, or {@link #WAIT}. */
	@Nullable Object take(ClaimResult claim) throws Throwable {
		Protocol protocol = this.protocol;
		String workflow = this.operation.workflow();
		Protocol.Answer answer = protocol.answer(this.operation, this.request, claim);
		Outcome outcome = answer.outcome();
		if (outcome != null) { // not in progress
			protocol.ended(workflow, outcome);
		}
		if (answer.execution() != null) {
			return run(answer.execution(), this.action);
		}
		if (answer.refusal() != null) {
			throw answer.refusal();
		}
		if (!answer.inProgress()) {
			AsyncResult async = this.operation.async();
			return (async != null) ? async.completed(answer.result()) : answer.result();
		}
		this.attempt = claim.record().attempt();
		inProgress(!waited());
		return WAIT;
	}

	@Override
	IdempotencyInProgressException rejected() {
		return conflict(1, "The idempotency key of '" + this.operation.workflow()
				+ "' is being processed by another run (attempt " + this.attempt + ")");
	}

	/**
	 * Claims until the call is answered, sleeping on the engine's time while a run of the same
	 * key elsewhere is waited for.
	 */
	@Nullable Object execute() throws Throwable {
		return claimed();
	}

	private @Nullable Object run(Execution execution, Action action) throws Throwable {
		IdempotentOperation operation = execution.operation();
		IdempotencyContext previous = execution.bind();
		Object result;
		try {
			result = action.proceed();
		}
		catch (RedeliveryRequested ex) {
			execution.unbind(previous);
			RuntimeException notGivenBack = this.protocol.settlement().settle(execution, new Ending.Abandoned());
			if (notGivenBack != null) {
				logger.warn("Could not give back " + execution.id() + ", whose delivery comes again: "
						+ notGivenBack.getMessage() + "; it runs once its lease runs out");
			}
			return ex.result();
		}
		catch (Throwable ex) {
			execution.unbind(previous);
			RuntimeException notStored = this.protocol.settlement().settle(execution, this.protocol.settlement().threw(execution, ex));
			if (notStored != null) {
				Settlement.notFinished(ex, notStored);
			}
			throw ex;
		}
		execution.unbind(previous);
		if (operation.async() != null) {
			return settleLater(execution, operation.async(), result);
		}
		RuntimeException notStored = this.protocol.settlement().settle(execution, this.protocol.settlement().returned(execution, result));
		if (notStored != null) {
			throw notStored;
		}
		return result;
	}

	/**
	 * Settles the run once an asynchronous result settles (the lease renewed until then),
	 * and answers with a result that settles after the record did. Any number of
	 * subscribers, early or late, re-subscribing or cancelling, see that one outcome: none
	 * of them reaches the settlement.
	 */
	private Object settleLater(Execution execution, AsyncResult async, @Nullable Object result) {
		if (result == null) {
			this.protocol.settlement().settle(execution, new Ending.Released(new IllegalStateException("null result")));
			throw new IllegalStateException("The asynchronous idempotent operation '" + execution.workflow()
					+ "' returned null instead of a result that settles");
		}
		CompletableFuture<@Nullable Object> settled = new CompletableFuture<>();
		Observation observation = this.protocol.observations().handOver();
		CompletionStage<?> stage;
		// a result assembled lazily (a Mono.fromCallable) runs the method's code when it is
		// subscribed, here: with the run's context bound, as for the method's call, and in the
		// Reactor context for the threads it goes on to (IdempotencyContextAccessor)
		IdempotencyContext previous = execution.bind();
		try {
			stage = async.stage(result, this.context, execution);
		}
		finally {
			execution.unbind(previous);
		}
		stage.whenComplete((value, thrown) -> {
			Throwable failure = (thrown instanceof CompletionException && thrown.getCause() != null) ? thrown.getCause()
					: thrown;
			Ending ending = (failure != null) ? this.protocol.settlement().threw(execution, failure)
					: this.protocol.settlement().returned(execution, value);
			if (settlesAfterTheTransaction(execution, ending)) {
				settle(settled, observation, value, failure);
				return;
			}
			this.protocol.settlement().settleLater(execution, ending, observation, (notStored) -> {
				if (failure == null && notStored != null) {
					settle(settled, observation, null, notStored);
				}
				else {
					if (failure != null && notStored != null) {
						Settlement.notFinished(failure, notStored);
					}
					settle(settled, observation, value, failure);
				}
			});
		});
		return async.of(settled);
	}

	/**
	 * Whether the run ended inside the caller's reactive transaction, which its claim does
	 * not take part in: then it is settled once that transaction has ended, after a commit as
	 * it ended, after a rollback as if it never ran (as a thread's transaction is followed),
	 * so that a record never says "done" for writes that did not commit.
	 */
	private boolean settlesAfterTheTransaction(Execution execution, Ending ending) {
		Object context = this.context;
		if (context == null || !ReactiveTransactions.PRESENT || execution.claim().joinsTransaction()) {
			return false;
		}
		Settlement settlement = this.protocol.settlement();
		java.util.function.Consumer<@Nullable RuntimeException> logged = (notStored) -> {
			if (notStored != null) {
				logger.warn("After its reactive transaction ended: " + notStored.getMessage(), notStored);
			}
		};
		return ReactiveTransactions.onEnd(context, new Transactions.End() {

			@Override
			public void committed() {
				settlement.settleLater(execution, ending.afterCommit(), null, logged);
			}

			@Override
			public void rolledBack() {
				settlement.settleLater(execution, ending.afterRollback(), null, logged);
			}

			@Override
			public void unknown() {
				rolledBack();
			}

		});
	}

	private static void settle(CompletableFuture<@Nullable Object> settled, @Nullable Observation observation,
			@Nullable Object value, @Nullable Throwable failure) {
		try {
			if (observation != null) {
				if (failure != null) {
					observation.error(failure);
				}
				observation.stop();
			}
		}
		finally {
			if (failure != null) {
				settled.completeExceptionally(failure);
			}
			else {
				settled.complete(value);
			}
		}
	}

	/** Fail-open: the operation runs without a claim, its context still bound. */
	private @Nullable Object runUnprotected() throws Throwable {
		Execution execution = new Execution(this.protocol.calls(), this.protocol.observer(), this.operation, this.id,
				null, null, null);
		IdempotencyContext previous = execution.bind();
		try {
			return this.action.proceed();
		}
		finally {
			execution.unbind(previous);
		}
	}

}
