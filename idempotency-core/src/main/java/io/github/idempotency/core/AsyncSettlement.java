package io.github.idempotency.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.store.ClaimHandle;

/**
 * Finishes the run of an asynchronous operation once its result settles, then settles the
 * caller's result: the record is completed, failed or released as for a synchronous run,
 * on the thread that settled the result. That thread is often an event loop, so a
 * completion or failure the store does not take is not retried on it: each further
 * attempt is a task on the engine's retry scheduler ({@link RunEndings}: a fixed pair of
 * threads, none of them sleeping between attempts), and the caller's result settles once
 * they end.
 */
final class AsyncSettlement implements BiConsumer<@Nullable Object, @Nullable Throwable> {

	private final IdempotencyEngine engine;

	private final RunEndings endings;

	private final Execution execution;

	private final ClaimHandle claim;

	private final LeaseRenewer.@Nullable Lease lease;

	private final CompletableFuture<@Nullable Object> settled;

	private final @Nullable Observation observation;

	AsyncSettlement(IdempotencyEngine engine, Execution execution, ClaimHandle claim, LeaseRenewer.@Nullable Lease lease,
			CompletableFuture<@Nullable Object> settled, @Nullable Observation observation) {
		this.engine = engine;
		this.endings = engine.endings();
		this.execution = execution;
		this.claim = claim;
		this.lease = lease;
		this.settled = settled;
		this.observation = observation;
	}

	@Override
	public void accept(@Nullable Object value, @Nullable Throwable failure) {
		this.engine.cancel(this.lease);
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		String response = null;
		if (cause == null) {
			try {
				response = this.execution.operation().codec().write(value);
			}
			catch (RuntimeException ex) {
				cause = ex;
			}
		}
		if (cause == null) {
			// a result that is not stored leaves the record in progress: released, it would run again
			String result = response;
			store(StoreOperation.COMPLETE, () -> this.endings.complete(this.execution, this.claim, result, false),
					(notStored) -> settle(value, notStored));
		}
		else if (this.execution.operation().isPermanentFailure(cause)) {
			Throwable thrown = cause;
			store(StoreOperation.FAIL, () -> this.endings.fail(this.execution, this.claim, thrown, false),
					(notStored) -> {
						if (notStored != null) {
							this.endings.notFinished(thrown, notStored);
						}
						settle(null, thrown);
					});
		}
		else {
			Throwable thrown = cause;
			inScope(() -> {
				this.endings.finishAfterFailure(this.execution, this.claim, thrown, false);
				return null;
			});
			settle(null, thrown);
		}
	}

	/**
	 * Stores how the run ended with a first {@code attempt} here and, after a store error a
	 * retry may fix, further ones on the engine's retry threads while the lease lasts; then hands
	 * what the last attempt threw ({@code null} once stored) to {@code then}.
	 */
	private void store(StoreOperation step, Runnable attempt, Consumer<@Nullable RuntimeException> then) {
		RuntimeException notStored = inScope(() -> attempt(attempt));
		if (notStored == null || !mayRetry(notStored)) {
			then.accept(notStored);
			return;
		}
		this.endings.retrying(step, this.execution.id().toString(), this.execution.operation(),
				(RuntimeException) notStored.getCause());
		long deadline = System.nanoTime() + this.execution.operation().leaseTtl().toNanos();
		retry(step, attempt, then, notStored, deadline, IdempotencyEngine.firstBackoff(), 2);
	}

	/**
	 * Makes attempt {@code number} after {@code backoff}, on one of the engine's retry threads, and
	 * the next one after twice that while the lease lasts.
	 */
	private void retry(StoreOperation step, Runnable attempt, Consumer<@Nullable RuntimeException> then,
			RuntimeException notStored, long deadline, long backoff, int number) {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0) {
			then.accept(notStored);
			return;
		}
		try {
			this.endings.retryLater(() -> {
				RuntimeException again = inScope(() -> attempt(attempt));
				if (again == null) {
					this.endings.answered(step, this.execution.id().toString(), number);
					then.accept(null);
				}
				else if (!mayRetry(again)) {
					then.accept(again);
				}
				else {
					retry(step, attempt, then, again, deadline,
							Math.min(backoff * 2, IdempotencyEngine.maxBackoff()), number + 1);
				}
			}, Math.min(backoff, remaining));
		}
		catch (RuntimeException ex) {
			// the engine is closed
			notStored.addSuppressed(ex);
			then.accept(notStored);
		}
	}

	/**
	 * One attempt to store how the run ended.
	 * @return what it threw (an {@link Error} wrapped, so that the caller's result still
	 * settles), {@code null} once stored
	 */
	private @Nullable RuntimeException attempt(Runnable attempt) {
		try {
			attempt.run();
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
		catch (Error ex) {
			return new IdempotencyStoreException("Could not store how " + this.execution.id() + " ended", ex);
		}
	}

	/** A store error a retry may fix ({@code complete} and {@code fail} wrap what the store threw). */
	private static boolean mayRetry(RuntimeException notStored) {
		return notStored instanceof IdempotencyStoreException && notStored.getCause() instanceof RuntimeException cause
				&& RunEndings.mayRetryResult(cause);
	}

	private <T> T inScope(Supplier<T> step) {
		if (this.observation == null) {
			return step.get();
		}
		try (Observation.Scope scope = this.observation.openScope()) {
			return step.get();
		}
	}

	private void settle(@Nullable Object value, @Nullable Throwable failure) {
		try {
			if (this.observation != null) {
				if (failure != null) {
					this.observation.error(failure);
				}
				this.observation.stop();
			}
		}
		finally {
			if (failure != null) {
				this.settled.completeExceptionally(failure);
			}
			else {
				this.settled.complete(value);
			}
		}
	}

}
