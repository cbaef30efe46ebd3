package io.github.idempotency.internal;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * The caller's Spring transaction, without requiring spring-tx: whether one is active, and
 * a way to act once it has ended.
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

	/**
	 * Whether {@link #onEnd} can follow the current transaction: one is active, with
	 * synchronization.
	 */
	static boolean canFollow() {
		return isActive() && TransactionSynchronizationManager.isSynchronizationActive();
	}

	/**
	 * Calls {@code end} once the current transaction has ended (only where
	 * {@link #canFollow()}).
	 */
	static void onEnd(End end) {
		TransactionSynchronizationManager.registerSynchronization(new Follower(end));
	}

	/**
	 * What to do once a transaction has ended.
	 */
	interface End {

		/** It committed; what this throws reaches the caller that committed. */
		void committed();

		/** It rolled back, a failed commit included. */
		void rolledBack();

		/** Its outcome is not known (a commit that failed, as Spring reports it by default). */
		void unknown();

	}

	private record Follower(End end) implements TransactionSynchronization {

		@Override
		public void afterCommit() {
			this.end.committed();
		}

		@Override
		public void afterCompletion(int status) {
			if (status == STATUS_ROLLED_BACK) {
				this.end.rolledBack();
			}
			else if (status == STATUS_UNKNOWN) {
				this.end.unknown();
			}
		}

	}

}
