package io.github.idempotency.internal.http;

import org.jspecify.annotations.Nullable;

import io.micrometer.context.ThreadLocalAccessor;

/**
 * The WebFlux request a handler method is called for, bound to the thread that calls it.
 * {@code IdempotencyExchangeFilter} puts it in the Reactor context under {@link #KEY};
 * with Reactor's automatic context propagation ({@code Hooks.enableAutomaticContextPropagation()})
 * and {@code io.micrometer:context-propagation}, the {@link Accessor} (registered with
 * {@code ContextRegistry} through {@code META-INF/services}) restores it in a
 * {@code ThreadLocal} wherever the chain runs, so that a handler method with a plain
 * result, which WebFlux calls on a thread of its blocking executor, finds it there. This
 * class does not need the context-propagation library; its {@link Accessor} does.
 */
public final class BoundExchange {

	/** The key of the request in the Reactor context, and of its {@code ThreadLocal}. */
	public static final String KEY = "io.github.idempotency.web.reactive.IdempotencyExchangeFilter.exchange";

	private static final ThreadLocal<@Nullable Object> CURRENT = new ThreadLocal<>();

	private BoundExchange() {
	}

	/**
	 * The request bound to the current thread.
	 * @return what the filter put in the Reactor context, or {@code null} when nothing
	 * restored it on this thread
	 */
	public static @Nullable Object current() {
		return CURRENT.get();
	}

	/**
	 * Restores {@link BoundExchange}'s {@code ThreadLocal} from the Reactor context: what
	 * Reactor's automatic context propagation calls around each signal it delivers.
	 */
	public static final class Accessor implements ThreadLocalAccessor<Object> {

		@Override
		public Object key() {
			return KEY;
		}

		@Override
		public @Nullable Object getValue() {
			return CURRENT.get();
		}

		@Override
		public void setValue(Object value) {
			CURRENT.set(value);
		}

		@Override
		public void setValue() {
			CURRENT.remove();
		}

	}

}
