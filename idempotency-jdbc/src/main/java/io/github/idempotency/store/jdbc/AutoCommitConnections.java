package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.InfrastructureProxy;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application's data source as the store takes connections from it: a new connection
 * (one no transaction has bound to the thread) auto-commits, whatever the pool's default,
 * so that each step outside a transaction is committed by its own statement. A pool that
 * hands out connections with auto-commit off ({@code spring.datasource.hikari.auto-commit=false})
 * would otherwise roll back every claim and completion when the connection returns to it,
 * and each delivery would run the operation again. The pool puts its default back when the
 * connection returns ({@code setAutoCommit} marks it changed).
 * <p>
 * A transaction's connection is never taken here: as an {@link InfrastructureProxy} this
 * data source is the same resource as its target for Spring's transaction synchronization,
 * so {@code DataSourceUtils} finds the connection a transaction bound to the target, and a
 * transaction manager given this data source binds its connection to the target.
 */
final class AutoCommitConnections extends DelegatingDataSource implements InfrastructureProxy {

	private static final Log logger = LogFactory.getLog(AutoCommitConnections.class);

	AutoCommitConnections(DataSource target) {
		super(target);
	}

	@Override
	public Connection getConnection() throws SQLException {
		return autoCommitting(obtainTargetDataSource().getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return autoCommitting(obtainTargetDataSource().getConnection(username, password));
	}

	/**
	 * Switches the connection of this data source that is bound to the thread without an
	 * actual transaction ({@code SUPPORTS}, or a statement of the application's own while
	 * synchronization is active) to auto-commit, when it does not auto-commit (the pool's
	 * default): that commits what it held, which the pool would otherwise roll back with
	 * the store's steps when the connection returns.
	 * @throws DataAccessResourceFailureException when the connection refuses
	 */
	void autoCommitBoundConnection() {
		if (TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.getResource(this) instanceof ConnectionHolder holder) {
			try {
				Connection connection = holder.getConnection();
				if (!connection.getAutoCommit()) {
					connection.setAutoCommit(true);
				}
			}
			catch (SQLException ex) {
				throw new DataAccessResourceFailureException("Could not switch the connection bound to the thread to "
						+ "auto-commit, so that the claim commits at once", ex);
			}
		}
	}

	@Override
	public Object getWrappedObject() {
		return obtainTargetDataSource();
	}

	private static Connection autoCommitting(Connection connection) throws SQLException {
		try {
			if (!connection.getAutoCommit()) {
				connection.setAutoCommit(true);
			}
		}
		catch (SQLException ex) {
			// a pool's connection enlisted in a JTA transaction refuses: its statements belong to
			// that transaction, and the store claims in it (JdbcIdempotencyStore#isInTransaction;
			// pgjdbc's and MariaDB Connector/J's own XA connections report auto-commit, so they
			// are not asked); a broken connection fails the statement that follows
			logger.debug("Could not switch a connection to auto-commit: " + ex);
		}
		return connection;
	}

}
