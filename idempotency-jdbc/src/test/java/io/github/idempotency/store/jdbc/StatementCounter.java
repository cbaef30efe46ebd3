package io.github.idempotency.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source that counts the statements prepared and the commits asked on its
 * connections (a single-threaded count is exact for the tests that read it), and can make
 * a commit fail.
 */
final class StatementCounter extends DelegatingDataSource {

	final AtomicInteger statements = new AtomicInteger();

	/** The SQL of the statements prepared, in order. */
	final List<String> prepared = new CopyOnWriteArrayList<>();

	/** The commits asked of its connections. */
	final AtomicInteger commits = new AtomicInteger();

	private final AtomicInteger commitsToFail = new AtomicInteger();

	private final AtomicReference<@Nullable Interlude> interlude = new AtomicReference<>();

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

	/**
	 * Runs {@code action} once, just before the next statement whose SQL starts with
	 * {@code prefix} is prepared: something another instance does between two statements
	 * of a step.
	 * @param prefix how the statement's SQL starts
	 * @param action what to run
	 */
	void beforeNext(String prefix, Runnable action) {
		this.interlude.set(new Interlude(prefix, action));
	}

	/**
	 * Makes the next commit on one of its connections fail, as a server that aborted the
	 * transaction at its commit: the transaction is rolled back, and the commit throws.
	 */
	void failNextCommit() {
		this.commitsToFail.incrementAndGet();
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection connection = super.getConnection();
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					if (method.getName().equals("commit")) {
						this.commits.incrementAndGet();
						if (this.commitsToFail.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
							connection.rollback();
							throw new SQLException("The commit failed (made to fail by the test)");
						}
					}
					if (method.getName().startsWith("prepare") || method.getName().equals("createStatement")) {
						this.statements.incrementAndGet();
						if (args != null && args.length > 0 && args[0] instanceof String sql) {
							this.prepared.add(sql);
						}
						Interlude next = this.interlude.get();
						if (next != null && args != null && args[0] instanceof String sql && sql.startsWith(next.prefix())
								&& this.interlude.compareAndSet(next, null)) {
							next.action().run();
						}
					}
					try {
						return method.invoke(connection, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getTargetException();
					}
				});
	}

	private record Interlude(String prefix, Runnable action) {
	}

}
