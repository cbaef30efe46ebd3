package io.github.idempotency.internal;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyContext;
import io.micrometer.context.ThreadLocalAccessor;

/**
 * The current {@code IdempotencyContext} as {@code io.micrometer:context-propagation} sees
 * it, registered with {@code ContextRegistry} through {@code META-INF/services}. The engine
 * subscribes a method's {@code Mono} with its run in the Reactor context, under
 * {@link Execution#CONTEXT_KEY}; with Reactor's automatic context propagation
 * ({@code spring.reactor.context-propagation=auto}) the run is then current wherever the
 * {@code Mono}'s operators run, and in a Kotlin {@code suspend fun} on every thread it
 * resumes on (when its caller's coroutine holds Spring's {@code PropagationContextElement},
 * which restores what this accessor reads). Without the context-propagation library this
 * class is never loaded.
 */
public final class IdempotencyContextAccessor implements ThreadLocalAccessor<IdempotencyContext> {

	@Override
	public Object key() {
		return Execution.CONTEXT_KEY;
	}

	@Override
	public @Nullable IdempotencyContext getValue() {
		return IdempotencyContext.find().orElse(null);
	}

	@Override
	public void setValue(IdempotencyContext value) {
		((Execution) value).bind();
	}

	@Override
	public void setValue() {
		IdempotencyContext.find().ifPresent((current) -> ((Execution) current).unbind(null));
	}

}
