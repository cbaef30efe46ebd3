package io.github.idempotency.store.r2dbc;

import io.r2dbc.spi.ConnectionFactory;
import reactor.core.publisher.Mono;

import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.util.Assert;

/**
 * The store's transactions on its {@code ConnectionFactory}, found in the Reactor context:
 * whether a claim joins the caller's reactive transaction, and a short transaction of the
 * store's own where a step needs one.
 */
final class R2dbcTransactions {

	private final ConnectionFactory connectionFactory;

	/** A transaction of the store's own, apart from whatever the caller runs. */
	private final TransactionalOperator ownTransaction;

	R2dbcTransactions(ConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition(
				TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.ownTransaction = TransactionalOperator.create(new R2dbcTransactionManager(connectionFactory), definition);
	}

	/**
	 * Whether an actual reactive transaction runs on this store's {@code ConnectionFactory}
	 * in the subscriber's context: a connection bound to it (by an
	 * {@code R2dbcTransactionManager}) that does not auto-commit. A connection bound without
	 * a transaction ({@code SUPPORTS}, {@code NOT_SUPPORTED}, another resource's
	 * transaction) does not count: there every statement commits at once.
	 * @return whether the claim joins that transaction; an {@code IllegalStateException}
	 * when it is read-only, as the claim would have to write in it
	 */
	Mono<Boolean> isInTransaction() {
		return TransactionSynchronizationManager.forCurrentTransaction().map((synchronization) -> {
			if (!synchronization.isActualTransactionActive()
					|| !(synchronization.getResource(this.connectionFactory) instanceof ConnectionHolder holder)) {
				return false;
			}
			boolean inTransaction = !holder.getConnection().isAutoCommit();
			Assert.state(!inTransaction || !synchronization.isCurrentTransactionReadOnly(),
					"An idempotent operation cannot run in a read-only transaction: the r2dbc store writes its record "
							+ "in the caller's transaction. Remove readOnly = true from the transaction around it");
			return inTransaction;
		}).onErrorResume(NoTransactionException.class, (ex) -> Mono.just(false));
	}

	/**
	 * Runs {@code work} in a transaction of its own on the store's {@code ConnectionFactory},
	 * committed once, whatever the caller runs (which it suspends).
	 */
	<T> Mono<T> inOwnTransaction(Mono<T> work) {
		return this.ownTransaction.transactional(work);
	}

	/**
	 * Registers {@code synchronization} with the caller's reactive transaction.
	 * @return {@code false} when there is none with active synchronization
	 */
	Mono<Boolean> register(TransactionSynchronization synchronization) {
		return TransactionSynchronizationManager.forCurrentTransaction().map((manager) -> {
			if (!manager.isSynchronizationActive()) {
				return false;
			}
			manager.registerSynchronization(synchronization);
			return true;
		}).onErrorResume(NoTransactionException.class, (ex) -> Mono.just(false));
	}

}
