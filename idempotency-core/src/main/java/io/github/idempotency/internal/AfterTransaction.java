package io.github.idempotency.internal;

import java.util.Arrays;
import java.util.List;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

/**
 * The settlement ({@link Settlement}) of the runs of a transaction their claims do not take
 * part in, once it has ended: after a commit as they ended, after a rollback, or a commit
 * whose outcome is not known, as if they never ran ({@link Ending#afterRollback}). The
 * transaction is over, so a store error a retry may fix is retried.
 */
final class AfterTransaction implements Transactions.End {

	private static final Log logger = Protocol.logger;

	private final Settlement settlement;

	private final List<Execution> executions;

	private final List<Ending> endings;

	AfterTransaction(Settlement settlement, List<Execution> executions, List<Ending> endings) {
		this.settlement = settlement;
		this.executions = executions;
		this.endings = endings;
	}

	@Override
	public void committed() {
		List<Ending> committed = this.endings.stream().map(Ending::afterCommit).toList();
		// its resources are still bound to this thread, but it is over: waiting holds no lock
		RuntimeException first = first(this.settlement.store(this.executions, committed, true));
		if (first != null) {
			throw first;
		}
	}

	@Override
	public void rolledBack() {
		settleAsRolledBack("rolled back");
	}

	/**
	 * A commit that failed without saying whether it took place (Spring reports a
	 * failed JDBC commit so): as a rollback, since recording "done" for writes that
	 * may not have committed loses the operation, while giving the key back runs it
	 * once more at worst.
	 */
	@Override
	public void unknown() {
		logger.warn("The transaction around " + this.executions.get(0).id() + (this.executions.size() > 1
				? " and " + (this.executions.size() - 1) + " more" : "") + " ended with an unknown outcome (its "
				+ "commit failed); the next delivery runs it again");
		settleAsRolledBack("failed to commit");
	}

	private void settleAsRolledBack(String how) {
		List<Ending> rolledBack = this.endings.stream().map(Ending::afterRollback).toList();
		RuntimeException first = first(this.settlement.store(this.executions, rolledBack, true));
		if (first != null) {
			logger.warn("After its transaction " + how + ": " + first.getMessage(), first);
		}
	}

	private static @Nullable RuntimeException first(@Nullable RuntimeException[] problems) {
		RuntimeException first = null;
		for (RuntimeException problem : problems) {
			if (problem == null || problem == first) {
				continue;
			}
			if (first == null) {
				first = problem;
			}
			else if (!Arrays.asList(first.getSuppressed()).contains(problem)) {
				first.addSuppressed(problem);
			}
		}
		return first;
	}

}
