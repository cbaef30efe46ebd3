package io.github.idempotency.store.jdbc.tx;

import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * The application's transaction manager, whose next commit can be made to fail as a
 * server fails one that it aborts at the commit (a deferred constraint, a serialization
 * failure, a connection lost on the way): the transaction is rolled back and the commit
 * throws, which Spring reports to its synchronizations as an unknown outcome.
 */
class FailingCommits extends DataSourceTransactionManager {

	private final AtomicInteger commitsToFail = new AtomicInteger();

	FailingCommits(DataSource dataSource) {
		super(dataSource);
	}

	void failNextCommit() {
		this.commitsToFail.incrementAndGet();
	}

	@Override
	protected void doCommit(DefaultTransactionStatus status) {
		if (this.commitsToFail.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			doRollback(status);
			throw new TransactionSystemException("The commit failed (made to fail by the test)");
		}
		super.doCommit(status);
	}

}
