package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.InProgressPolicy;
import org.springframework.core.ResolvableType;

/**
 * The shapes a call of an idempotent operation takes, for behaviour that must hold in each
 * of them: one case of the protocol, run through every shape. Each shape calls the engine
 * as its adapter does and hands back what its caller sees, a value or the exception. The
 * body runs inside the engine's action, on the calling thread (so it sees the
 * {@code IdempotencyContext}); an asynchronous shape settles its outcome on another thread.
 */
public enum Shape {

	/** One synchronous call ({@code execute}). */
	SINGLE {

		@Override
		public @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				@Nullable Object payload, Supplier<@Nullable Object> body) throws Throwable {
			return engine.execute(operation, key, payload, body::get);
		}

	},

	/** One element of a batch ({@code executeAll}), behind an element of its own key. */
	BATCH_ELEMENT {

		@Override
		public @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				@Nullable Object payload, Supplier<@Nullable Object> body) throws Throwable {
			String neighbour = key + "-neighbour";
			List<@Nullable Object> results = engine.executeAll(operation,
					List.of(new BatchItem(neighbour, neighbour, neighbour), new BatchItem(key, key, payload)),
					ElementFailure.FAILURES, (positions, out) -> {
						for (int j = 0; j < positions.length; j++) {
							try {
								out[j] = (positions[j] == 1) ? body.get() : null;
							}
							catch (RuntimeException ex) {
								throw new ElementFailure(j, ex);
							}
						}
					});
			return results.get(1);
		}

		@Override
		public boolean skipsRefusals() {
			return true;
		}

		@Override
		public boolean bindsContext() {
			return false;
		}

	},

	/** A {@code CompletableFuture} result that settles on another thread. */
	FUTURE {

		@Override
		public Type resultType(Type valueType) {
			return ResolvableType.forClassWithGenerics(CompletableFuture.class, ResolvableType.forType(valueType))
				.getType();
		}

		@Override
		public @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				@Nullable Object payload, Supplier<@Nullable Object> body) throws Throwable {
			CompletableFuture<?> result = (CompletableFuture<?>) engine.execute(operation, key, payload,
					() -> offloaded(body));
			try {
				return result.get(30, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				throw (ex.getCause() instanceof java.util.concurrent.CompletionException completion)
						? completion.getCause() : ex.getCause();
			}
		}

	},

	/** A Reactor {@code Mono} result that settles on another thread. */
	MONO {

		@Override
		public Type resultType(Type valueType) {
			return ResolvableType.forClassWithGenerics(Mono.class, ResolvableType.forType(valueType)).getType();
		}

		@Override
		public @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				@Nullable Object payload, Supplier<@Nullable Object> body) throws Throwable {
			Mono<?> result = (Mono<?>) engine.execute(operation, key, payload,
					() -> Mono.fromFuture(offloaded(body)).publishOn(Schedulers.boundedElastic()));
			try {
				return result.toFuture().get(30, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				throw ex.getCause();
			}
		}

	};

	/**
	 * An asynchronous shape's body, run on a thread of its own with the run's
	 * {@code IdempotencyContext} bound there, as an application's asynchronous method hands
	 * its work to a thread that may block: on a non-blocking store the engine calls the
	 * method on the thread the claim's answer arrived on (a store client's event loop),
	 * where a body that calls a blocking store could not wait.
	 */
	private static CompletableFuture<@Nullable Object> offloaded(Supplier<@Nullable Object> body) {
		Execution execution = (Execution) io.github.idempotency.IdempotencyContext.find().orElse(null);
		return CompletableFuture.supplyAsync(() -> {
			io.github.idempotency.IdempotencyContext previous = (execution != null) ? execution.bind() : null;
			try {
				return body.get();
			}
			finally {
				if (execution != null) {
					execution.unbind(previous);
				}
			}
		}, BODIES);
	}

	private static final java.util.concurrent.Executor BODIES = java.util.concurrent.Executors
		.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "shape-body");
			thread.setDaemon(true);
			return thread;
		});

	/**
	 * How a batch's body says which element failed, as Spring Kafka's
	 * {@code BatchListenerFailedException} does; the caller gets the element's own
	 * exception.
	 */
	private static final class ElementFailure extends RuntimeException {

		static final BatchFailures FAILURES = new BatchFailures() {

			@Override
			public int failedIndex(Throwable failure, List<?> received) {
				return (failure instanceof ElementFailure element) ? element.index : -1;
			}

			@Override
			public Throwable cause(Throwable failure) {
				return (failure instanceof ElementFailure) ? failure.getCause() : failure;
			}

			@Override
			public Throwable translate(Throwable failure, int originalIndex, List<?> original) {
				return cause(failure);
			}

		};

		private final int index;

		ElementFailure(int index, Throwable cause) {
			super(null, cause, false, false);
			this.index = index;
		}

	}

	/**
	 * Runs {@code body} as this shape's caller would.
	 * @return what the caller gets
	 */
	public abstract @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
			@Nullable Object payload, Supplier<@Nullable Object> body) throws Throwable;

	public @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
			Supplier<@Nullable Object> body) throws Throwable {
		return call(engine, operation, key, key, body);
	}

	/** The declared result type of an operation of this shape whose value is {@code valueType}. */
	public Type resultType(Type valueType) {
		return valueType;
	}

	/**
	 * Whether a refusal (a replayed failure, a key reused) is answered by skipping the call
	 * with {@code null} rather than thrown: a batch without a way to fail at one element.
	 */
	public boolean skipsRefusals() {
		return false;
	}

	/** Whether the body sees its run's {@code IdempotencyContext}. */
	public boolean bindsContext() {
		return true;
	}

	/** An operation of this shape, fingerprinted, that records {@code recordFailureFor}. */
	public IdempotentOperation prepare(IdempotencyEngine engine, String workflow, Type valueType,
			List<Class<? extends Throwable>> recordFailureFor) {
		return prepare(engine, workflow, valueType, InProgressPolicy.REJECT, recordFailureFor);
	}

	public IdempotentOperation prepare(IdempotencyEngine engine, String workflow, Type valueType,
			InProgressPolicy onInProgress, List<Class<? extends Throwable>> recordFailureFor) {
		return engine.prepare(OperationDefinition.of(workflow, resultType(valueType))
			.leaseTtl(Duration.ofSeconds(30))
			.onInProgress(onInProgress)
			.recordFailureFor(recordFailureFor)
			.build());
	}

}
