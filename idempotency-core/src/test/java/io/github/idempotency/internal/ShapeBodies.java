package io.github.idempotency.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyContext;

/**
 * Where an asynchronous {@link Shape}'s body runs: on a thread of its own, with the run's
 * {@code IdempotencyContext} bound there, as an application's asynchronous method hands its
 * work to a thread that may block. On a non-blocking store the engine calls the method on
 * the thread the claim's answer arrived on (a store client's event loop), where a body that
 * calls a blocking store could not wait.
 */
public final class ShapeBodies {

	private static final Executor BODIES = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "shape-body");
		thread.setDaemon(true);
		return thread;
	});

	private ShapeBodies() {
	}

	/**
	 * Runs {@code body} on a thread of its own, with the context of the run calling this
	 * (if any) bound there.
	 * @param body the body
	 * @return its value, or what it threw
	 */
	public static CompletableFuture<@Nullable Object> offloaded(Supplier<@Nullable Object> body) {
		Execution execution = (Execution) IdempotencyContext.find().orElse(null);
		return CompletableFuture.supplyAsync(() -> {
			IdempotencyContext previous = (execution != null) ? execution.bind() : null;
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

}
