package io.github.idempotency.core;

import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * Whether a Spring transaction is active, without requiring spring-tx.
 */
final class Transactions {

	private static final boolean PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			Transactions.class.getClassLoader());

	private Transactions() {
	}

	static boolean isActive() {
		return PRESENT && TransactionSynchronizationManager.isActualTransactionActive();
	}

}
