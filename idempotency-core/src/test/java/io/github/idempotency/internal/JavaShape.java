package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.BatchFailures;
import org.springframework.core.ResolvableType;

/**
 * The shapes a Java caller gives a call of an idempotent operation: one synchronous call, an
 * element of a batch, a {@code CompletableFuture}, a {@code Mono}. Each calls the engine as
 * its adapter does and hands back what its caller sees, a value or the exception. The body
 * runs inside the engine's action, on the calling thread (so it sees the
 * {@code IdempotencyContext}); an asynchronous shape settles its outcome on another thread.
 */
public enum JavaShape implements Shape {

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
					() -> ShapeBodies.offloaded(body));
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
					() -> Mono.fromFuture(ShapeBodies.offloaded(body)).publishOn(Schedulers.boundedElastic()));
			try {
				return result.toFuture().get(30, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				throw ex.getCause();
			}
		}

	};

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

}
