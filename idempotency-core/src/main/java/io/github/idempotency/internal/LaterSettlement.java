package io.github.idempotency.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.store.RecordStatus;

/**
 * How an asynchronous run's ending is stored ({@link Settlement#settleLater}): a first
 * attempt where its result settled, further ones with {@link Backoff} for up to the lease as
 * tasks on the engine's scheduler, none of them sleeping, not inside a transaction. On a
 * blocking store's claim, an attempt runs on the thread that makes it; on a non-blocking
 * store's ({@link NonBlockingClaim}), it is started there and answered wherever the store
 * answers, the re-read after a {@code false} included.
 */
final class LaterSettlement {

	private final Settlement settlement;

	private final StoreCalls calls;

	private final Execution execution;

	private final Ending ending;

	private final @Nullable Observation observation;

	private final Consumer<@Nullable RuntimeException> then;

	LaterSettlement(Settlement settlement, StoreCalls calls, Execution execution, Ending ending,
			@Nullable Observation observation, Consumer<@Nullable RuntimeException> then) {
		this.settlement = settlement;
		this.calls = calls;
		this.execution = execution;
		this.ending = ending;
		this.observation = observation;
		this.then = then;
	}

	void start() {
		attempt().whenComplete((error, ignored) -> {
			if (error == null || !Settlement.mayRetry(this.ending, error) || Transactions.isActive()
					|| this.execution.claim().joinsTransaction()) {
				this.then.accept(this.settlement.outcome(this.execution, this.ending, error));
				return;
			}
			this.settlement.retrying(this.ending, this.execution.id().toString(), this.execution.operation(), error);
			later(error, Backoff.within(this.calls.time(), this.execution.operation().leaseTtl()), 2);
		});
	}

	private void later(RuntimeException error, Backoff backoff, int number) {
		long pause = backoff.next();
		if (pause < 0) {
			this.then.accept(this.settlement.outcome(this.execution, this.ending, error));
			return;
		}
		try {
			this.calls.time().schedule(() -> attempt().whenComplete((again, ignored) -> {
				if (again == null) {
					this.settlement.answered(this.ending, this.execution.id().toString(), number);
					this.then.accept(null);
				}
				else if (!Settlement.mayRetry(this.ending, again)) {
					this.then.accept(this.settlement.outcome(this.execution, this.ending, again));
				}
				else {
					later(again, backoff, number + 1);
				}
			}), pause);
		}
		catch (RuntimeException ex) {
			// the engine is closed
			error.addSuppressed(ex);
			this.then.accept(this.settlement.outcome(this.execution, this.ending, error));
		}
	}

	/**
	 * One attempt.
	 * @return what it threw ({@code null} once stored; an {@link Error} wrapped), or
	 * {@link Settlement#LOST} when answered {@code false}
	 */
	private CompletableFuture<@Nullable RuntimeException> attempt() {
		Execution execution = this.execution;
		Ending ending = this.ending;
		if (!(execution.claim() instanceof NonBlockingClaim claim)) {
			return CompletableFuture.completedFuture(Settlement.inScope(this.observation,
					() -> this.settlement.attempt(ending, () -> this.settlement.apply(execution, ending))));
		}
		RecordStatus status = ending.status();
		return Settlement.inScope(this.observation, () -> this.calls.stepAsync(ending.step(), () -> claim.store(ending)
			.thenCompose((stored) -> (stored || status == null) ? CompletableFuture.completedFuture(stored)
					: claim.find(execution.id()).thenApply((record) -> Settlement.isFinishedBy(execution, status, record)))))
			.handle((stored, thrown) -> {
				if (thrown == null) {
					return stored ? null : Settlement.LOST;
				}
				Throwable failure = (thrown instanceof CompletionException && thrown.getCause() != null)
						? thrown.getCause() : thrown;
				return (failure instanceof RuntimeException ex) ? ex
						: new IdempotencyStoreException("Could not store how a run ended", failure);
			});
	}

}
