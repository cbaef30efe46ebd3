package io.github.idempotency.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordStatus;

/**
 * Stores how runs ended: a result ({@code complete}), a permanent failure ({@code fail}) or
 * a release. A result or a permanent failure the store fails to take is retried outside a
 * transaction for up to the lease (see {@link #storeResults}); the further attempts of an
 * asynchronous run are tasks on two threads of its own.
 */
final class RunEndings implements AutoCloseable {

	/** The engine's logger: what happens to a run's end is the engine's to say. */
	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyStore store;

	private final IdempotencyObserver observer;

	private final ExecutionObservations observations;

	/**
	 * Where the results (and permanent failures) of asynchronous runs are offered again,
	 * one attempt per task, off the threads that settled them: two threads, however many
	 * wait.
	 */
	private final ScheduledExecutorService retries = Executors.newScheduledThreadPool(2, (task) -> {
		Thread thread = new Thread(task, "idempotency-result-retry");
		thread.setDaemon(true);
		return thread;
	});

	RunEndings(IdempotencyStore store, IdempotencyObserver observer, ExecutionObservations observations) {
		this.store = store;
		this.observer = observer;
		this.observations = observations;
	}

	@Override
	public void close() {
		// attempts already scheduled still run and settle their results; no new one is taken
		this.retries.shutdown();
	}

	/**
	 * Runs an attempt to store a result or a failure later, on one of two threads of its own.
	 * @param attempt the attempt
	 * @param delayNanos when
	 * @throws java.util.concurrent.RejectedExecutionException once the engine is closed
	 */
	void retryLater(Runnable attempt, long delayNanos) {
		this.retries.schedule(attempt, delayNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Stores the result of a run (see {@link #storeResults}).
	 * @param retry whether to retry a store error here (not on a thread the engine must not
	 * block)
	 */
	void complete(Execution execution, ClaimHandle claim, @Nullable String response, boolean retry) {
		boolean completed;
		try {
			completed = storeResults(StoreOperation.COMPLETE, execution.id().toString(), execution.operation(), retry,
					() -> claim.complete(response) || isFinishedEarlier(execution, RecordStatus.COMPLETED));
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("The result of " + execution.id()
					+ " could not be stored; the operation ran and its record stays in progress until its lease runs out",
					ex);
		}
		if (!completed) {
			throw execution.leaseLost(this.observer, "its result was not stored");
		}
	}

	/**
	 * Completes several executions in one store call (one {@code complete} step): a claim
	 * that is no longer its run's is answered at its position with an
	 * {@link io.github.idempotency.IdempotencyLeaseLostException}; a store error is thrown for them all.
	 * @return per execution what to throw, {@code null} where it was completed
	 */
	@Nullable RuntimeException[] completeAll(List<Execution> executions, List<ClaimHandle> claims,
			List<@Nullable String> responses) {
		List<Boolean> completed;
		try {
			completed = storeResults(StoreOperation.COMPLETE,
					executions.size() + " operation(s) of '" + executions.get(0).workflow() + "'",
					executions.get(0).operation(), true, () -> storeAll(executions, claims, responses));
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("The results of " + executions.size() + " operation(s) of '"
					+ executions.get(0).workflow() + "' could not all be stored; the operations ran and the records "
					+ "not stored stay in progress until their leases run out", ex);
		}
		@Nullable RuntimeException[] failures = new RuntimeException[executions.size()];
		for (int i = 0; i < failures.length; i++) {
			if (!completed.get(i)) {
				failures[i] = executions.get(i).leaseLost(this.observer, "its result was not stored");
			}
		}
		return failures;
	}

	/**
	 * One {@code completeAll}; each record answered as not stored is read (see
	 * {@link #isFinishedEarlier}).
	 */
	private List<Boolean> storeAll(List<Execution> executions, List<ClaimHandle> claims,
			List<@Nullable String> responses) {
		List<Boolean> completed = this.store.completeAll(claims, responses);
		if (!completed.contains(false)) {
			return completed;
		}
		List<Boolean> checked = new ArrayList<>(completed);
		for (int i = 0; i < checked.size(); i++) {
			if (!checked.get(i) && isFinishedEarlier(executions.get(i), RecordStatus.COMPLETED)) {
				checked.set(i, true);
			}
		}
		return checked;
	}

	/**
	 * Stores how operations that ran ended: their results ({@code complete}) or their
	 * permanent failures ({@code fail}), one store step per attempt. Outside a transaction a
	 * store error is retried with backoff for up to the lease: the operation's effects are
	 * done, and a record left in progress would be taken over and run again once its lease
	 * runs out. Each attempt is fenced like the first: it answers {@code false} rather than
	 * overwrite a run that took the record over, and {@code attempt} then reads the record:
	 * one an earlier attempt finished (only its answer was lost, or a batch failed halfway)
	 * counts as stored. Without {@code retry}, and where {@link #mayRetryResult} says no, the
	 * error is thrown at once. Once the lease has run out another run may take the key over:
	 * a fenced attempt then answers {@code false}, and the run that took over wins. A release
	 * ({@code retry} false) is one attempt: the next delivery is meant to run again anyway.
	 */
	private <T> T storeResults(StoreOperation step, String what, IdempotentOperation operation, boolean retry,
			Supplier<T> attempt) {
		long deadline = 0;
		long backoff = IdempotencyEngine.firstBackoff();
		for (int number = 1;; number++) {
			RuntimeException failure;
			Observation observation = this.observations.step(step);
			long start = System.nanoTime();
			try {
				T stored = attempt.get();
				this.observer.onStoreCall(step, System.nanoTime() - start, true);
				if (number > 1) {
					answered(step, what, number);
				}
				return stored;
			}
			catch (RuntimeException ex) {
				this.observer.onStoreCall(step, System.nanoTime() - start, false);
				observation.error(ex);
				failure = ex;
			}
			finally {
				observation.stop();
			}
			if (!retry || !mayRetryResult(failure)) {
				throw failure;
			}
			if (number == 1) {
				deadline = System.nanoTime() + operation.leaseTtl().toNanos();
				retrying(step, what, operation, failure);
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0 || !IdempotencyEngine.pauseFor(Math.min(backoff, remaining))) {
				throw failure;
			}
			backoff = Math.min(backoff * 2, IdempotencyEngine.maxBackoff());
		}
	}

	/**
	 * Whether how a run ended may be offered to the store again: not inside a transaction
	 * (the engine never waits inside one: it holds its locks and connection, and rolling it
	 * back undoes the method's writes), and not after an error that a retry cannot fix (a
	 * refusal, a constraint or a malformed statement).
	 */
	static boolean mayRetryResult(RuntimeException failure) {
		return !IdempotencyEngine.isRefusal(failure) && !StoreErrors.isPermanent(failure) && !Transactions.isActive();
	}

	void retrying(StoreOperation step, String what, IdempotentOperation operation, RuntimeException failure) {
		logger.warn("Could not store " + what(step) + what + ": " + failure + "; retrying for up to its lease ("
				+ operation.leaseTtl() + ")");
	}

	void answered(StoreOperation step, String what, int attempt) {
		logger.info("The store answered on attempt " + attempt + " to take " + what(step) + what);
	}

	private static String what(StoreOperation step) {
		return switch (step) {
			case FAIL -> "the failure of ";
			case RELEASE -> "the release of ";
			default -> "the result of ";
		};
	}

	/**
	 * Whether the record of {@code execution}, which a completion or failure answered as not
	 * stored, was finished with {@code status} all the same by an earlier attempt (only its
	 * answer was lost): finished under this run's owner, which no other run has. Read only
	 * after such an answer, which without an earlier failed attempt means another run took
	 * the key over.
	 */
	private boolean isFinishedEarlier(Execution execution, RecordStatus status) {
		String owner = execution.owner();
		return owner != null && this.store.find(execution.id())
			.filter((record) -> record.status() == status && owner.equals(record.owner()))
			.isPresent();
	}

	void finishAfterFailure(Execution execution, ClaimHandle claim, Throwable failure) {
		finishAfterFailure(execution, claim, failure, execution.operation().isPermanentFailure(failure));
	}

	/**
	 * Fails ({@code permanent}: retried as a result is, see {@link #storeResults}, so this
	 * may wait for up to the lease: not for a thread that settles an asynchronous result) or
	 * releases the claim after {@code failure}; a store error or a lost lease is added to
	 * {@code failure} as suppressed.
	 */
	void finishAfterFailure(Execution execution, ClaimHandle claim, Throwable failure, boolean permanent) {
		try {
			if (permanent) {
				fail(execution, claim, failure, true);
			}
			else {
				release(execution, claim, failure);
			}
		}
		catch (IdempotencyStoreException ex) {
			notFinished(failure, ex);
		}
	}

	/**
	 * Records a permanent failure (see {@link #storeResults}); a lost lease is added to
	 * {@code failure} as suppressed.
	 * @param retry whether to retry a store error here (not on a thread the engine must not
	 * block)
	 * @throws IdempotencyStoreException when the store did not take it
	 */
	void fail(Execution execution, ClaimHandle claim, Throwable failure, boolean retry) {
		boolean failed;
		try {
			failed = storeResults(StoreOperation.FAIL, execution.id().toString(), execution.operation(), retry,
					() -> claim.fail(failure) || isFinishedEarlier(execution, RecordStatus.FAILED));
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("The failure of " + execution.id()
					+ " could not be recorded; its record stays in progress until its lease runs out, then a delivery "
					+ "may run the operation again", ex);
		}
		if (!failed) {
			failure.addSuppressed(execution.leaseLost(this.observer, "its failure was not recorded"));
		}
	}

	private void release(Execution execution, ClaimHandle claim, Throwable failure) {
		boolean released;
		try {
			released = storeResults(StoreOperation.RELEASE, execution.id().toString(), execution.operation(), false,
					() -> claim.release(failure));
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("The key of " + execution.id()
					+ " could not be released; its record stays in progress until its lease runs out", ex);
		}
		if (!released) {
			failure.addSuppressed(execution.leaseLost(this.observer, "its failure was not recorded"));
		}
	}

	/**
	 * The store did not take how a run that threw {@code failure} ended: the store error
	 * is added to {@code failure} as suppressed.
	 */
	void notFinished(Throwable failure, RuntimeException storeError) {
		logger.warn("After the operation threw " + failure + ": " + storeError.getMessage(), storeError);
		failure.addSuppressed(storeError);
	}

}
