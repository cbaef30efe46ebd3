package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * An operation whose result arrives after the call returns: {@code CompletableFuture<T>},
 * {@code CompletionStage<T>} or, with Reactor, {@code Mono<T>}. The engine stores the
 * value {@code T} once it settles, and answers a duplicate with a settled result of the
 * same type. Any other asynchronous type it cannot follow fails the preparation.
 */
abstract class AsyncResult {

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			AsyncResult.class.getClassLoader());

	private final Type valueType;

	private AsyncResult(Type valueType) {
		this.valueType = valueType;
	}

	/**
	 * The asynchronous shape of a result type.
	 * @param resultType the operation's declared result type
	 * @return the shape, or {@code null} for a synchronous result
	 * @throws IllegalStateException for an asynchronous type the engine cannot follow
	 */
	static @Nullable AsyncResult of(Type resultType) {
		ResolvableType type = ResolvableType.forType(resultType);
		Class<?> raw = type.resolve(Object.class);
		if (raw == CompletableFuture.class || raw == CompletionStage.class) {
			return new Futures(valueType(type, resultType));
		}
		if (REACTOR_PRESENT && Monos.isMono(raw)) {
			return new Monos(valueType(type, resultType));
		}
		if (Future.class.isAssignableFrom(raw) || CompletionStage.class.isAssignableFrom(raw)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(raw) != null) {
			throw new IllegalStateException("the result type " + resultType + " is asynchronous in a way the engine "
					+ "cannot follow: return CompletableFuture<T>, CompletionStage<T> or Mono<T>, or a plain value");
		}
		return null;
	}

	private static Type valueType(ResolvableType type, Type resultType) {
		ResolvableType value = type.getGeneric(0);
		if (value.resolve() == null) {
			throw new IllegalStateException("the result type " + resultType + " does not say the type of its value");
		}
		return value.getType();
	}

	/**
	 * The type of the value the result settles with.
	 */
	Type valueType() {
		return this.valueType;
	}

	/**
	 * The stage a returned result settles through, subscribed by the engine.
	 * @param result the result
	 * @param context the caller's Reactor {@code ContextView} a {@code Mono} is subscribed
	 * with (where it finds the caller's reactive transaction), or {@code null}
	 * @param run the run the result is the method's result of, which a {@code Mono} is
	 * subscribed with ({@link IdempotencyContextAccessor}), or {@code null}
	 */
	abstract CompletionStage<?> stage(Object result, @Nullable Object context, @Nullable Execution run);

	/**
	 * A result of the declared type that settles with {@code settled}.
	 */
	abstract Object of(CompletableFuture<@Nullable Object> settled);

	/**
	 * A result of the declared type that starts a call: a {@code Mono} when it is
	 * subscribed, with the subscriber's Reactor context (each subscription a call of its
	 * own), a future now.
	 * @param start starts the call with the caller's {@code ContextView} ({@code null} for a
	 * future) and answers its settled value
	 */
	abstract Object deferred(Function<@Nullable Object, CompletableFuture<@Nullable Object>> start);

	/**
	 * Whether a call of this shape starts when its result is subscribed ({@code Mono}), so
	 * that a non-blocking store may claim it then, and call the method on the thread its
	 * answer arrives on; a future's method runs when it is called, on the caller's thread,
	 * which may block (a WebFlux handler's plain result on the blocking executor).
	 */
	abstract boolean isLazy();

	/**
	 * A result of the declared type already settled with {@code value}.
	 */
	Object completed(@Nullable Object value) {
		return of(CompletableFuture.completedFuture(value));
	}

	private static final class Futures extends AsyncResult {

		Futures(Type valueType) {
			super(valueType);
		}

		@Override
		CompletionStage<?> stage(Object result, @Nullable Object context, @Nullable Execution run) {
			return (CompletionStage<?>) result;
		}

		@Override
		Object of(CompletableFuture<@Nullable Object> settled) {
			return settled;
		}

		@Override
		Object deferred(Function<@Nullable Object, CompletableFuture<@Nullable Object>> start) {
			return start.apply(null);
		}

		@Override
		boolean isLazy() {
			return false;
		}

	}

	/** Isolates Reactor, so that this class loads without it. */
	private static final class Monos extends AsyncResult {

		Monos(Type valueType) {
			super(valueType);
		}

		static boolean isMono(Class<?> type) {
			return type == reactor.core.publisher.Mono.class;
		}

		@Override
		CompletionStage<?> stage(Object result, @Nullable Object context, @Nullable Execution run) {
			reactor.core.publisher.Mono<?> mono = (reactor.core.publisher.Mono<?>) result;
			if (context != null) {
				mono = mono.contextWrite((reactor.util.context.ContextView) context);
			}
			if (run != null) {
				mono = mono.contextWrite(reactor.util.context.Context.of(Execution.CONTEXT_KEY, run));
			}
			return mono.toFuture();
		}

		@Override
		Object of(CompletableFuture<@Nullable Object> settled) {
			// a subscriber's cancel (a timeout() that re-subscribes) must not cancel the shared outcome
			return reactor.core.publisher.Mono.fromFuture(settled, true);
		}

		@Override
		boolean isLazy() {
			return true;
		}

		@Override
		Object deferred(Function<@Nullable Object, CompletableFuture<@Nullable Object>> start) {
			// the call is the engine's once started: a subscriber's cancel does not cancel it
			return reactor.core.publisher.Mono.deferContextual((context) -> reactor.core.publisher.Mono
				.fromFuture(start.apply(context), true));
		}

	}

}
