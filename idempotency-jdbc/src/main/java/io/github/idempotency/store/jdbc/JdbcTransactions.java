package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

/**
 * The store's transactions on its data source: whether a claim joins the caller's
 * transaction, and a short transaction of the store's own where a step needs one.
 */
final class JdbcTransactions {

	private final AutoCommitConnections dataSource;

	private final TransactionTemplate transactions;

	JdbcTransactions(AutoCommitConnections dataSource) {
		this.dataSource = dataSource;
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
	}

	/**
	 * The data source a transaction binds its connection to: a
	 * {@link TransactionAwareDataSourceProxy}'s target, as Spring's transaction managers
	 * take it. The proxy hands out that transaction's connection, so a store that looked
	 * for the transaction under the proxy would not see it, and would hold its claims by a
	 * lease inside it.
	 */
	static DataSource transactionsResource(DataSource dataSource) {
		if (dataSource instanceof TransactionAwareDataSourceProxy proxy) {
			DataSource target = proxy.getTargetDataSource();
			Assert.notNull(target, "The TransactionAwareDataSourceProxy has no target data source");
			return target;
		}
		return dataSource;
	}

	/**
	 * Runs {@code work} in one transaction on the store's {@code DataSource}: the caller's,
	 * when one is active there, else a transaction of its own, committed once.
	 */
	<T> T inTransaction(TransactionCallback<T> work) {
		T result = this.transactions.execute(work);
		Assert.state(result != null, "No result");
		return result;
	}

	/**
	 * Whether an actual transaction runs on this store's data source: a connection bound
	 * to the thread (by a {@code DataSourceTransactionManager} or a
	 * {@code JpaTransactionManager}) with auto-commit off. A connection bound without a
	 * transaction ({@code SUPPORTS}, {@code NOT_SUPPORTED}, or another resource's
	 * transaction) does not count: there every statement commits at once, also on a
	 * connection bound without a transaction that did not auto-commit
	 * ({@link AutoCommitConnections#autoCommitBoundConnection}). Under JTA no connection is
	 * bound before the first statement: there the connection the claim takes is asked, and
	 * one that the pool enlisted in the transaction refuses auto-commit (see
	 * {@link #joinsWithoutBinding()}).
	 * @throws IllegalStateException when that transaction is read-only: the claim would
	 * have to write in it
	 */
	boolean isInTransaction() {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			this.dataSource.autoCommitBoundConnection();
			return false;
		}
		boolean inTransaction;
		try {
			inTransaction = (TransactionSynchronizationManager.getResource(this.dataSource) instanceof ConnectionHolder holder)
					? !holder.getConnection().getAutoCommit() : joinsWithoutBinding();
		}
		catch (SQLException ex) {
			throw new DataAccessResourceFailureException("Cannot tell whether a transaction is active", ex);
		}
		// refused on every database alike: PostgreSQL and MariaDB reject the write, H2 would
		// take it, and a routing data source may have sent the transaction to a replica
		Assert.state(!inTransaction || !TransactionSynchronizationManager.isCurrentTransactionReadOnly(),
				"An idempotent operation cannot run in a read-only transaction: the jdbc store writes its record in "
						+ "the caller's transaction. Remove readOnly = true from the transaction around it");
		return inTransaction;
	}

	/**
	 * Whether the connection the claim takes, with none bound by a transaction of this
	 * data source, is part of the actual transaction all the same: one that a pool enlisted
	 * in a JTA transaction, which refuses to switch to auto-commit. Any other connection is
	 * switched to auto-commit, so that the claim commits at once, as a claim inside another
	 * resource's transaction does. The connection stays bound to the transaction, as the
	 * claim's statement would bind it.
	 */
	private boolean joinsWithoutBinding() throws SQLException {
		Connection connection = DataSourceUtils.getConnection(this.dataSource);
		try {
			return !connection.getAutoCommit();
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.dataSource);
		}
	}

}
