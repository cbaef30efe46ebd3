package io.github.idempotency.internal;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.IdempotencyEngine.Action;
import io.github.idempotency.observe.StoreOperation;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.RecordId;

/**
 * The non-blocking driver of a single call's claims ({@code IdempotencyEngine#executeAsync}),
 * as {@link SingleCall#execute} is the blocking one: each claim a task of {@code claims} on a
 * blocking store, or on a non-blocking store ({@link NonBlockingStore}) started where it is
 * asked for, with the caller's context, and its answer taken where it arrives; each wait a
 * timer on the engine's scheduler; the call's observation opened around each claim.
 */
final class AsyncSingleCall implements Runnable {

	private final Protocol protocol;

	private final IdempotentOperation operation;

	private final AsyncResult async;

	private final @Nullable Object key;

	private final @Nullable Object payload;

	private final Action action;

	private final Executor claims;

	/** The caller's Reactor context, which a non-blocking store's claims are subscribed with. */
	private final @Nullable Object context;

	private final CompletableFuture<@Nullable Object> answer = new CompletableFuture<>();

	AsyncSingleCall(Protocol protocol, IdempotentOperation operation, @Nullable Object key, @Nullable Object payload,
			Action action, Executor claims, @Nullable Object context) {
		this.protocol = protocol;
		this.operation = operation;
		this.async = Objects.requireNonNull(operation.async());
		this.key = key;
		this.payload = payload;
		this.action = action;
		this.claims = claims;
		this.context = context;
	}

	CompletableFuture<@Nullable Object> start() {
		submit(executor(), this);
		return this.answer;
	}

	/** Where a claim is made: where it is asked for with a non-blocking store, else a task of {@code claims}. */
	private Executor executor() {
		return (this.protocol.nonBlocking() != null) ? Runnable::run : this.claims;
	}

	private void submit(Executor executor, Runnable task) {
		try {
			executor.execute(task);
		}
		catch (RuntimeException ex) {
			// the executor is shut down, or full
			this.answer.completeExceptionally(ex);
		}
	}

	private @Nullable SingleCall call;

	private @Nullable Observation observation;

	@Override
	public void run() {
		if (this.call == null) {
			try {
				RecordId id = this.protocol.id(this.operation.workflow(), this.key);
				this.call = new SingleCall(this.protocol, this.operation, id, this.payload, this.action,
						this.context);
				if (!this.protocol.observations().isNoop()) {
					this.observation = this.protocol.observations().execution(id);
				}
			}
			catch (Throwable ex) {
				this.answer.completeExceptionally(ex);
				return;
			}
		}
		SingleCall call = this.call;
		NonBlockingStore nonBlocking = this.protocol.nonBlocking();
		if (nonBlocking == null) {
			inScope(() -> attempt(call, call::round));
			return;
		}
		CompletableFuture<ClaimResult> claim = inScope(() -> this.protocol.calls()
			.stepAsync(StoreOperation.CLAIM, () -> nonBlocking.claim(call.request, this.context)));
		claim.whenComplete((result, thrown) -> {
			Throwable failure = (thrown instanceof CompletionException && thrown.getCause() != null)
					? thrown.getCause() : thrown;
			inScope(() -> attempt(call, () -> {
				if (failure instanceof RuntimeException ex) {
					return call.claimFailed(ex);
				}
				if (failure != null) {
					throw failure;
				}
				return call.take(Objects.requireNonNull(result));
			}));
		});
	}

	/** Runs {@code step} in the call's observation, stopped after a step that does not wait. */
	private <T> T inScope(java.util.function.Supplier<T> step) {
		Observation observation = this.observation;
		if (observation == null) {
			return step.get();
		}
		T answered;
		try (Observation.Scope scope = observation.openScope()) {
			answered = step.get();
		}
		if (answered instanceof Boolean waits && !waits) {
			ExecutionObservations.stopUnlessHandedOver(observation);
		}
		return answered;
	}

	/** One claim's answer; whether the call waits for another. */
	private boolean attempt(SingleCall call, Round round) {
		try {
			Object answered = round.answer();
			if (answered != ClaimLoop.WAIT) {
				this.async.stage(Objects.requireNonNull(answered), null, null).whenComplete((value, failure) -> {
					if (failure != null) {
						this.answer.completeExceptionally((failure instanceof CompletionException
								&& failure.getCause() != null) ? failure.getCause() : failure);
					}
					else {
						this.answer.complete(value);
					}
				});
				return false;
			}
			this.protocol.time().schedule(() -> submit(executor(), this), call.pause());
			return true;
		}
		catch (Throwable ex) {
			if (this.observation != null) {
				this.observation.error(ex);
			}
			this.answer.completeExceptionally(ex);
			return false;
		}
	}

	/** A round's answer, as {@link SingleCall#round} gives it. */
	@FunctionalInterface
	private interface Round {

		@Nullable Object answer() throws Throwable;

	}

}
