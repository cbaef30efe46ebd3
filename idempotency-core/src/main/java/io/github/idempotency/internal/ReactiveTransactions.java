package io.github.idempotency.internal;

import java.util.concurrent.atomic.AtomicReference;

import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * The caller's reactive Spring transaction, found in its Reactor context, as
 * {@link Transactions} finds a thread's: a way to act once it has ended. Loaded only with
 * Reactor and spring-tx present ({@link #PRESENT}).
 */
final class ReactiveTransactions {

	static final boolean PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			ReactiveTransactions.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.transaction.reactive.TransactionSynchronizationManager",
					ReactiveTransactions.class.getClassLoader());

	private ReactiveTransactions() {
	}

	/**
	 * Calls {@code end} once the reactive transaction of {@code context} has ended, when
	 * one is active there with synchronization.
	 * @param context the caller's {@code ContextView}
	 * @param end what to do then, on the thread that ends it
	 * @return whether a transaction is followed; {@code false} when there is none
	 */
	static boolean onEnd(Object context, Transactions.End end) {
		AtomicReference<TransactionSynchronizationManager> found = new AtomicReference<>();
		// the context is read where it is subscribed: no thread waits
		TransactionSynchronizationManager.forCurrentTransaction()
			.contextWrite((ContextView) context)
			.subscribe(found::set, (noTransaction) -> {
			});
		TransactionSynchronizationManager transaction = found.get();
		if (transaction == null || !transaction.isSynchronizationActive() || !transaction.isActualTransactionActive()) {
			return false;
		}
		transaction.registerSynchronization(new TransactionSynchronization() {

			@Override
			public Mono<Void> afterCompletion(int status) {
				return Mono.fromRunnable(() -> {
					if (status == STATUS_COMMITTED) {
						end.committed();
					}
					else if (status == STATUS_ROLLED_BACK) {
						end.rolledBack();
					}
					else {
						end.unknown();
					}
				});
			}

		});
		return true;
	}

}
