package io.github.idempotency.core;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.InProgressPolicy;
import org.springframework.core.ResolvableType;

/**
 * The shapes a call of an idempotent operation takes, for behaviour that must hold in each
 * of them: one case of the protocol, run through every shape. Each shape calls the engine
 * as its adapter does and hands back what its caller sees, a value or the exception.
 */
enum Shape {

	/** One synchronous call ({@code execute}). */
	SINGLE {

		@Override
		@Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				Supplier<@Nullable Object> body) throws Throwable {
			return engine.execute(operation, key, key, body::get);
		}

	},

	/** One element of a batch ({@code executeAll}), behind an element of its own key. */
	BATCH_ELEMENT {

		@Override
		@Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				Supplier<@Nullable Object> body) throws Throwable {
			String neighbour = key + "-neighbour";
			List<@Nullable Object> results = engine.executeAll(operation,
					List.of(new BatchItem(neighbour, neighbour, neighbour), new BatchItem(key, key, key)),
					BatchFailures.NONE, (positions, out) -> {
						for (int j = 0; j < positions.length; j++) {
							out[j] = (positions[j] == 1) ? body.get() : null;
						}
					});
			return results.get(1);
		}

		@Override
		boolean answersAReplayedFailureWithNull() {
			return true;
		}

	},

	/** A {@code CompletableFuture} result. */
	FUTURE {

		@Override
		Type resultType(Type valueType) {
			return ResolvableType.forClassWithGenerics(CompletableFuture.class, ResolvableType.forType(valueType))
				.getType();
		}

		@Override
		@Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				Supplier<@Nullable Object> body) throws Throwable {
			CompletableFuture<?> result = (CompletableFuture<?>) engine.execute(operation, key, key,
					() -> CompletableFuture.supplyAsync(body));
			try {
				return result.get(30, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				throw ex.getCause();
			}
		}

	},

	/** A Reactor {@code Mono} result. */
	MONO {

		@Override
		Type resultType(Type valueType) {
			return ResolvableType.forClassWithGenerics(Mono.class, ResolvableType.forType(valueType)).getType();
		}

		@Override
		@Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
				Supplier<@Nullable Object> body) throws Throwable {
			Mono<?> result = (Mono<?>) engine.execute(operation, key, key,
					() -> Mono.fromSupplier(body::get).subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()));
			try {
				return result.toFuture().get(30, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				throw ex.getCause();
			}
			catch (TimeoutException ex) {
				throw new AssertionError("The Mono did not settle", ex);
			}
		}

	};

	/**
	 * Runs {@code body} as this shape's caller would.
	 * @return what the caller gets
	 */
	abstract @Nullable Object call(IdempotencyEngine engine, IdempotentOperation operation, String key,
			Supplier<@Nullable Object> body) throws Throwable;

	/** The declared result type of an operation of this shape whose value is {@code valueType}. */
	Type resultType(Type valueType) {
		return valueType;
	}

	/** Whether a replayed permanent failure is answered with {@code null} (the item skipped) rather than thrown. */
	boolean answersAReplayedFailureWithNull() {
		return false;
	}

	/** An operation of this shape, fingerprinted, that records {@code recordFailureFor}. */
	IdempotentOperation prepare(IdempotencyEngine engine, String workflow, Type valueType,
			List<Class<? extends Throwable>> recordFailureFor) {
		return engine.prepare(new OperationDefinition(workflow, resultType(valueType), true, Duration.ofSeconds(30),
				null, InProgressPolicy.REJECT, recordFailureFor));
	}

}
