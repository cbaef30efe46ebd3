package io.github.idempotency;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The idempotent operation running on the current thread: its key, its attempt number
 * and its recovery point.
 *
 * <pre class="code">
 * IdempotencyContext ctx = IdempotencyContext.current();
 * if (ctx.recoveryPoint().isEmpty()) {
 *     reserveStock(order);
 *     ctx.saveRecoveryPoint("stock-reserved");
 * }
 * chargeCard(order);
 * </pre>
 */
public abstract class IdempotencyContext {

	private static final ThreadLocal<@Nullable IdempotencyContext> CURRENT = new ThreadLocal<>();

	/**
	 * The context of the idempotent operation running on this thread.
	 * @return the current context
	 * @throws IllegalStateException when no idempotent operation runs on this thread
	 */
	public static IdempotencyContext current() {
		IdempotencyContext context = CURRENT.get();
		if (context == null) {
			throw new IllegalStateException("No idempotent operation is running on this thread (on a thread a Mono "
					+ "moved to, or in a Kotlin suspend fun, the context follows with Reactor's automatic context "
					+ "propagation: spring.reactor.context-propagation=auto and io.micrometer:context-propagation)");
		}
		return context;
	}

	/**
	 * The context of the idempotent operation running on this thread, if any.
	 * @return the current context or empty
	 */
	public static Optional<IdempotencyContext> find() {
		return Optional.ofNullable(CURRENT.get());
	}

	/**
	 * For the engine's own context: a context exists only while the engine runs its
	 * operation.
	 */
	protected IdempotencyContext() {
	}

	/**
	 * Makes this context the current one on this thread and returns the one it replaces
	 * (for nested operations), to be given back to {@link #restoreCurrent}.
	 * @return the context that was current before
	 */
	protected final @Nullable IdempotencyContext makeCurrent() {
		IdempotencyContext previous = CURRENT.get();
		CURRENT.set(this);
		return previous;
	}

	/**
	 * Ends this context's turn as the current one: the context that was current before
	 * {@link #makeCurrent()} is current again.
	 * @param previous the context returned by {@code makeCurrent}
	 */
	protected final void restoreCurrent(@Nullable IdempotencyContext previous) {
		if (previous == null) {
			CURRENT.remove();
		}
		else {
			CURRENT.set(previous);
		}
	}

	/**
	 * The idempotency key of the running operation.
	 * @return the key
	 */
	public abstract String key();

	/**
	 * The workflow the key belongs to.
	 * @return the workflow
	 */
	public abstract String workflow();

	/**
	 * 1 on the first execution of the key, 2 and more after a takeover of a run whose
	 * lease expired (typically because its process crashed).
	 * @return the attempt number
	 */
	public abstract int attempt();

	/**
	 * The last recovery point saved by this or an earlier attempt.
	 * @return the recovery point, or empty
	 */
	public abstract Optional<String> recoveryPoint();

	/**
	 * Stores a recovery point at once (it survives a crash of this process, so that the
	 * attempt that takes over can resume from it) and renews the lease.
	 * @param recoveryPoint an application-defined marker
	 * @throws IdempotencyLeaseLostException when another run has taken the key over
	 */
	public abstract void saveRecoveryPoint(String recoveryPoint);

}
