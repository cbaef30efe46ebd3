package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.StoreOperation;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;

import io.github.idempotency.IdempotencyInProgressException;

/**
 * The one place a store call is timed and reported: the {@code idempotency.store} timer
 * ({@link IdempotencyObserver#onStoreCall}) and, for the steps of a call, an
 * {@code idempotency.store.operation} observation inside the call's.
 */
final class StoreCalls {

	private final IdempotencyObserver observer;

	private final ExecutionObservations observations;

	private final EngineTime time;

	StoreCalls(IdempotencyObserver observer, ExecutionObservations observations, EngineTime time) {
		this.observer = observer;
		this.observations = observations;
		this.time = time;
	}

	EngineTime time() {
		return this.time;
	}

	/**
	 * Makes a step of a call: timed and observed. A store that answers a claim with
	 * {@link IdempotencyInProgressException} (it cannot wait inside the caller's
	 * transaction) has answered: that counts as a success.
	 * @param step the step
	 * @param call the store call
	 * @return what the store answered
	 */
	<T> T step(StoreOperation step, Supplier<T> call) {
		Observation observation = this.observations.step(step);
		try {
			return timed(step, call);
		}
		catch (RuntimeException ex) {
			if (!(ex instanceof IdempotencyInProgressException)) {
				observation.error(ex);
			}
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	/**
	 * Makes a non-blocking step of a call, as {@link #step} makes one that blocks: timed and
	 * observed from its start here to its answer, on whatever thread that arrives.
	 * @param step the step
	 * @param call starts the store call
	 * @return what the store answers
	 */
	<T> CompletableFuture<T> stepAsync(StoreOperation step, Supplier<CompletableFuture<T>> call) {
		Observation observation = this.observations.step(step);
		long start = this.time.nanoTime();
		CompletableFuture<T> answer;
		try {
			answer = call.get();
		}
		catch (RuntimeException ex) {
			answer = CompletableFuture.failedFuture(ex);
		}
		return answer.whenComplete((value, thrown) -> {
			Throwable failure = (thrown instanceof CompletionException && thrown.getCause() != null) ? thrown.getCause()
					: thrown;
			boolean answered = failure == null || failure instanceof IdempotencyInProgressException;
			this.observer.onStoreCall(step, this.time.nanoTime() - start, answered);
			if (!answered) {
				observation.error(failure);
			}
			observation.stop();
		});
	}

	/**
	 * Makes a store call that belongs to no call's observation (a lease renewal): timed
	 * only.
	 * @param step the step
	 * @param call the store call
	 * @return what the store answered
	 */
	<T> T timed(StoreOperation step, Supplier<T> call) {
		long start = this.time.nanoTime();
		try {
			T answer = call.get();
			this.observer.onStoreCall(step, this.time.nanoTime() - start, true);
			return answer;
		}
		catch (IdempotencyInProgressException ex) {
			this.observer.onStoreCall(step, this.time.nanoTime() - start, true);
			throw ex;
		}
		catch (RuntimeException ex) {
			this.observer.onStoreCall(step, this.time.nanoTime() - start, false);
			throw ex;
		}
	}

}
