package io.github.idempotency.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source that counts the statements prepared on its connections (a single-threaded
 * count is exact for the tests that read it).
 */
final class StatementCounter extends DelegatingDataSource {

	final AtomicInteger statements = new AtomicInteger();

	StatementCounter(DataSource target) {
		super(target);
	}

	/**
	 * Counts the statements a call prepares.
	 * @param call what to run
	 * @return how many statements it prepared
	 */
	int during(Supplier<?> call) {
		int before = this.statements.get();
		call.get();
		return this.statements.get() - before;
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection connection = super.getConnection();
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					if (method.getName().startsWith("prepare") || method.getName().equals("createStatement")) {
						this.statements.incrementAndGet();
					}
					try {
						return method.invoke(connection, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getTargetException();
					}
				});
	}

}
