package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentResultNotStoredException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordStatus;

/**
 * The one place an ending is stored ({@link Ending}: complete, fail, release or give back),
 * whatever the shape of the call:
 * <ul>
 * <li>a run inside a transaction its claim does not take part in (redis, memory, jdbc on
 * another {@code DataSource}) is settled once that transaction has ended
 * ({@link AfterTransaction}): after a commit as it ended, after a rollback (a failed commit
 * included) as its writes are gone, so that a record never says "done" for writes that did
 * not commit;</li>
 * <li>a result or a permanent failure the store fails to take is offered again with
 * {@link Backoff} for up to the lease, outside a transaction only (the engine never waits
 * inside one), and not after an error a retry cannot fix; each attempt is fenced, and one
 * answered {@code false} reads the record: one an earlier attempt finished under this run's
 * owner (only its answer was lost) counts as stored;</li>
 * <li>an asynchronous run makes its first attempt on the thread that settled its result and
 * its further ones as tasks on the engine's scheduler ({@link EngineTime}), none of them
 * sleeping; on a non-blocking store, each attempt is answered without a thread held
 * ({@link LaterSettlement}).</li>
 * </ul>
 * What kept an ending from being stored (a store error, or the claim lost to a takeover) is
 * handed back to the shape, which throws it or adds it to the operation's own exception.
 */
final class Settlement {

	private static final Log logger = Protocol.logger;

	private final IdempotencyStore store;

	private final IdempotencyObserver observer;

	private final StoreCalls calls;

	private final LeaseRenewer renewer;


	Settlement(IdempotencyStore store, IdempotencyObserver observer, StoreCalls calls, LeaseRenewer renewer) {
		this.store = store;
		this.observer = observer;
		this.calls = calls;
		this.renewer = renewer;
	}

	/**
	 * The ending of a run that returned {@code result}: its result written, or, when it
	 * cannot be written, a failure that keeps the operation from running again.
	 */
	Ending returned(Execution execution, @Nullable Object result) {
		try {
			return new Ending.Completed(execution.operation().codec().write(result));
		}
		catch (RuntimeException ex) {
			IdempotentResultNotStoredException failure = new IdempotentResultNotStoredException("The result of "
					+ execution.id() + " (" + execution.operation().codec().type() + ") cannot be stored: "
					+ ex.getMessage() + "; the operation ran, so it is recorded as failed and not run again", ex);
			logger.error(failure.getMessage(), ex);
			return new Ending.Failed(failure);
		}
	}

	/**
	 * The ending of a run that threw {@code failure}: recorded when it is one of the
	 * operation's permanent failures, else released.
	 */
	Ending threw(Execution execution, Throwable failure) {
		return execution.operation().isPermanentFailure(failure) ? new Ending.Failed(failure)
				: new Ending.Released(failure);
	}

	/**
	 * Settles how a synchronous run ended: now, or once the transaction it ran in has
	 * ended (then what keeps it from being stored reaches the caller that commits).
	 * @return what kept it from being stored, {@code null} when it was stored (or will be)
	 */
	@Nullable RuntimeException settle(Execution execution, Ending ending) {
		return settleAll(List.of(execution), List.of(ending))[0];
	}

	/**
	 * Settles how the runs of a batch ended, as {@link #settle} does one: their results
	 * in one store call.
	 * @return per run what kept its ending from being stored, {@code null} where it was
	 * stored (the same exception where one store call failed for several)
	 */
	@Nullable RuntimeException[] settleAll(List<Execution> executions, List<Ending> endings) {
		if (!Transactions.isActive()) {
			return store(executions, endings, true);
		}
		if (Transactions.canFollow() && !joinsTransaction(executions)) {
			Transactions.onEnd(new AfterTransaction(this, executions, endings));
			return new RuntimeException[executions.size()];
		}
		// part of the caller's transaction (or no way to follow it): stored in it, no waiting
		return store(executions, endings, false);
	}

	/**
	 * Gives back, now, the claims of runs that never ran (whatever the transaction does:
	 * there is nothing of theirs to commit).
	 * @return per run what kept it from being given back, {@code null} where it was
	 */
	@Nullable RuntimeException[] giveBack(List<Execution> executions) {
		List<Ending> endings = new ArrayList<>(executions.size());
		executions.forEach((execution) -> endings.add(new Ending.Abandoned()));
		return store(executions, endings, false);
	}

	/**
	 * The store did not take how a run that threw {@code failure} ended: what kept it (a
	 * store error, logged, or a lost lease) is added to {@code failure} as suppressed.
	 */
	static void notFinished(Throwable failure, RuntimeException notStored) {
		if (notStored instanceof IdempotencyStoreException) {
			logger.warn("After the operation threw " + failure + ": " + notStored.getMessage(), notStored);
		}
		failure.addSuppressed(notStored);
	}

	private static boolean joinsTransaction(List<Execution> executions) {
		for (Execution execution : executions) {
			if (execution.claim().joinsTransaction()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Settles how an asynchronous run ended ({@link LaterSettlement}); then hands what kept
	 * it from being stored ({@code null} once stored) to {@code then}.
	 */
	void settleLater(Execution execution, Ending ending, @Nullable Observation observation,
			Consumer<@Nullable RuntimeException> then) {
		this.renewer.cancel(execution.lease());
		new LaterSettlement(this, this.calls, execution, ending, observation, then).start();
	}

	/**
	 * One attempt, timed.
	 * @return what it threw ({@code null} once stored; an {@link Error} wrapped, so that
	 * the caller's result still settles), or a lost-lease marker when answered
	 * {@code false}
	 */
	@Nullable RuntimeException attempt(Ending ending, Supplier<Boolean> attempt) {
		try {
			return this.calls.step(ending.step(), attempt) ? null : LOST;
		}
		catch (RuntimeException ex) {
			return ex;
		}
		catch (Error ex) {
			return new IdempotencyStoreException("Could not store how a run ended", ex);
		}
	}

	/** An attempt answered {@code false}: the claim is no longer this run's. */
	static final RuntimeException LOST = new RuntimeException("lost", null, false, false) {
	};

	/**
	 * Stores endings now: the results in one {@code completeAll}, the rest one by one.
	 * @param retry whether a store error a retry may fix is retried (outside a transaction
	 * only)
	 * @return per run what kept its ending from being stored, {@code null} where it was
	 */
	@Nullable RuntimeException[] store(List<Execution> executions, List<Ending> endings, boolean retry) {
		@Nullable RuntimeException[] problems = new RuntimeException[executions.size()];
		List<Integer> completed = new ArrayList<>(executions.size());
		for (int i = 0; i < problems.length; i++) {
			this.renewer.cancel(executions.get(i).lease());
			if (endings.get(i) instanceof Ending.Completed && executions.size() > 1) {
				completed.add(i);
			}
			else {
				Execution execution = executions.get(i);
				Ending ending = endings.get(i);
				RuntimeException error;
				try {
					error = attempts(ending, execution.id().toString(), execution, retry,
							() -> apply(execution, ending)) ? null : LOST;
				}
				catch (RuntimeException ex) {
					error = ex;
				}
				problems[i] = outcome(execution, ending, error);
			}
		}
		if (!completed.isEmpty()) {
			completeAll(executions, endings, completed, retry, problems);
		}
		return problems;
	}

	private void completeAll(List<Execution> executions, List<Ending> endings, List<Integer> positions,
			boolean retry, @Nullable RuntimeException[] problems) {
		List<Execution> runs = new ArrayList<>(positions.size());
		List<ClaimHandle> claims = new ArrayList<>(positions.size());
		List<@Nullable String> responses = new ArrayList<>(positions.size());
		for (int i : positions) {
			runs.add(executions.get(i));
			claims.add(executions.get(i).claim());
			responses.add(((Ending.Completed) endings.get(i)).response());
		}
		String what = runs.size() + " operation(s) of '" + runs.get(0).workflow() + "'";
		List<Boolean> stored;
		try {
			stored = attempts(new Ending.Completed(null), what, runs.get(0), retry, () -> {
				List<Boolean> answers = new ArrayList<>(this.store.completeAll(claims, responses));
				for (int j = 0; j < answers.size(); j++) {
					if (!answers.get(j) && isFinishedEarlier(runs.get(j), RecordStatus.COMPLETED)) {
						answers.set(j, true);
					}
				}
				return answers;
			});
		}
		catch (RuntimeException ex) {
			IdempotencyStoreException notStored = new IdempotencyStoreException("The results of " + what
					+ " could not all be stored; the operations ran and the records not stored stay in progress "
					+ "until their leases run out", ex);
			positions.forEach((i) -> problems[i] = notStored);
			return;
		}
		for (int j = 0; j < positions.size(); j++) {
			if (!stored.get(j)) {
				int i = positions.get(j);
				problems[i] = outcome(executions.get(i), endings.get(i), LOST);
			}
		}
	}

	/**
	 * One attempt of an ending on its claim: {@code true} when stored, also when an
	 * earlier attempt stored it and only its answer was lost.
	 */
	boolean apply(Execution execution, Ending ending) {
		return ending.storeOn(execution.claim()) || (ending.status() != null && isFinishedEarlier(execution, ending.status()));
	}

	/**
	 * Makes attempts at storing an ending on this thread: one, or while a store error a
	 * retry may fix goes on, more with {@link Backoff} for up to the lease.
	 */
	private <T> T attempts(Ending ending, String what, Execution execution, boolean retry, Supplier<T> attempt) {
		Backoff backoff = null;
		for (int number = 1;; number++) {
			try {
				T stored = this.calls.step(ending.step(), attempt);
				if (number > 1) {
					answered(ending, what, number);
				}
				return stored;
			}
			catch (RuntimeException ex) {
				if (!retry || !mayRetry(ending, ex)) {
					throw ex;
				}
				if (backoff == null) {
					backoff = Backoff.within(this.calls.time(), execution.operation().leaseTtl());
					retrying(ending, what, execution.operation(), ex);
				}
				if (!backoff.await()) {
					throw ex;
				}
			}
		}
	}

	/**
	 * Whether an ending may be offered to the store again after {@code error}: a result or a
	 * permanent failure, not after an error that a retry cannot fix (a refusal, a constraint
	 * or a malformed statement), and not inside a transaction.
	 */
	static boolean mayRetry(Ending ending, RuntimeException error) {
		return ending.retried() && error != LOST && !StoreErrors.isRefusal(error)
				&& !StoreErrors.isPermanent(error);
	}

	/**
	 * What kept {@code ending} from being stored, as the caller is to see it.
	 * @param error what the last attempt threw, {@link #LOST} when answered {@code false},
	 * {@code null} when stored
	 */
	@Nullable RuntimeException outcome(Execution execution, Ending ending, @Nullable RuntimeException error) {
		if (error == null) {
			return null;
		}
		if (error == LOST) {
			return execution.leaseLost(this.observer, ending.lost());
		}
		if (error instanceof IdempotencyStoreException && error.getCause() instanceof Error) {
			return error;
		}
		return new IdempotencyStoreException(ending.notStored(execution.id()), error);
	}

	/**
	 * Whether the record of {@code execution}, which a completion or failure answered as not
	 * stored, was finished with {@code status} all the same by an earlier attempt (only its
	 * answer was lost): finished under this run's owner, which no other run has. Read only
	 * after such an answer, which without an earlier failed attempt means another run took
	 * the key over.
	 */
	private boolean isFinishedEarlier(Execution execution, RecordStatus status) {
		return isFinishedBy(execution, status, this.store.find(execution.id()));
	}

	static boolean isFinishedBy(Execution execution, RecordStatus status, Optional<IdempotencyRecord> record) {
		String owner = execution.owner();
		return owner != null && record.filter((found) -> found.status() == status && owner.equals(found.owner()))
			.isPresent();
	}

	void retrying(Ending ending, String what, IdempotentOperation operation, RuntimeException failure) {
		logger.warn("Could not store " + ending.what() + what + ": " + failure + "; retrying for up to its lease ("
				+ operation.leaseTtl() + ")");
	}

	void answered(Ending ending, String what, int attempt) {
		logger.info("The store answered on attempt " + attempt + " to take " + ending.what() + what);
	}

	static <T> T inScope(@Nullable Observation observation, Supplier<T> step) {
		if (observation == null) {
			return step.get();
		}
		try (Observation.Scope scope = observation.openScope()) {
			return step.get();
		}
	}

}
