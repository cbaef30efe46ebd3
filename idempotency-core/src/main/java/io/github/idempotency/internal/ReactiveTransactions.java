package io.github.idempotency.internal;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * The caller's reactive Spring transaction, found in its Reactor context, as
 * {@link Transactions} finds a thread's: a way to act once it has ended. Loaded only with
 * Reactor and spring-tx present ({@link #PRESENT}). Public for the WebFlux adapter, whose
 * run's answer waits for the transaction of the handler method; not API.
 */
public final class ReactiveTransactions {

	/** Whether Reactor and spring-tx are on the class path; nothing else here is used without them. */
	public static final boolean PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			ReactiveTransactions.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.transaction.reactive.TransactionSynchronizationManager",
					ReactiveTransactions.class.getClassLoader());

	private ReactiveTransactions() {
	}

	/**
	 * Whether an actual reactive transaction with synchronization is active in
	 * {@code context}.
	 * @param context the caller's {@code ContextView}
	 * @return whether one is
	 */
	public static boolean isActive(ContextView context) {
		return active(context) != null;
	}

	/**
	 * Subscribes what {@code then} gives once the reactive transaction of {@code context}
	 * has ended; the transaction's completion waits for it, and logs what it fails with.
	 * @param context the caller's {@code ContextView}
	 * @param then what to do, given whether the transaction committed
	 * @return whether a transaction is followed; {@code false} when none is active there
	 * with synchronization
	 */
	public static boolean afterCompletion(ContextView context, Function<Boolean, Mono<Void>> then) {
		return follow(context, (status) -> then.apply(status == TransactionSynchronization.STATUS_COMMITTED));
	}

	/**
	 * Calls {@code end} once the reactive transaction of {@code context} has ended, when
	 * one is active there with synchronization.
	 * @param context the caller's {@code ContextView}
	 * @param end what to do then, on the thread that ends it
	 * @return whether a transaction is followed; {@code false} when there is none
	 */
	static boolean onEnd(Object context, Transactions.End end) {
		return follow((ContextView) context, (status) -> Mono.fromRunnable(() -> {
			if (status == TransactionSynchronization.STATUS_COMMITTED) {
				end.committed();
			}
			else if (status == TransactionSynchronization.STATUS_ROLLED_BACK) {
				end.rolledBack();
			}
			else {
				end.unknown();
			}
		}));
	}

	/** Registers {@code then}, given the transaction's completion status, when one is active. */
	private static boolean follow(ContextView context, IntFunction<Mono<Void>> then) {
		TransactionSynchronizationManager transaction = active(context);
		if (transaction == null) {
			return false;
		}
		transaction.registerSynchronization(new TransactionSynchronization() {

			@Override
			public Mono<Void> afterCompletion(int status) {
				return then.apply(status);
			}

		});
		return true;
	}

	private static @Nullable TransactionSynchronizationManager active(ContextView context) {
		AtomicReference<TransactionSynchronizationManager> found = new AtomicReference<>();
		// the context is read where it is subscribed: no thread waits
		TransactionSynchronizationManager.forCurrentTransaction()
			.contextWrite(context)
			.subscribe(found::set, (noTransaction) -> {
			});
		TransactionSynchronizationManager transaction = found.get();
		return (transaction != null && transaction.isSynchronizationActive()
				&& transaction.isActualTransactionActive()) ? transaction : null;
	}

}
