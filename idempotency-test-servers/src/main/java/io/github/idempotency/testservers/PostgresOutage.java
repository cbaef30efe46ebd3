package io.github.idempotency.testservers;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;

import static org.awaitility.Awaitility.await;

/**
 * A private PostgreSQL server, a pool on it, and an outage that a listener begins from
 * inside the method it runs: the server crashes at once (committed transactions survive)
 * and starts again, on another thread, once the test's condition holds (say, a completion
 * failed), so the test decides when it ends.
 */
public final class PostgresOutage implements AutoCloseable {

	private final PostgresServerProcess postgres = new PostgresServerProcess().start();

	private final HikariDataSource dataSource = new HikariDataSource();

	private final ExecutorService restarter = Executors.newSingleThreadExecutor();

	private volatile @Nullable Future<?> restart;

	public PostgresOutage() {
		this.dataSource.setJdbcUrl(this.postgres.url());
		this.dataSource.setPoolName("postgres-outage");
		// while the server is down, a connection is refused within a second, not the pool's default 30
		this.dataSource.setConnectionTimeout(1000);
	}

	/**
	 * A pool on the server's {@code postgres} database.
	 * @return the pool
	 */
	public DataSource dataSource() {
		return this.dataSource;
	}

	/**
	 * Crashes the server now and starts it again once {@code over} holds.
	 * @param over when the outage ends
	 */
	public void begin(BooleanSupplier over) {
		this.postgres.stop();
		this.restart = this.restarter.submit(() -> {
			await().atMost(Duration.ofSeconds(60)).until(over::getAsBoolean);
			return this.postgres.start();
		});
	}

	/**
	 * Fails when the server could not be started again (rather than leave the test to
	 * find a store error at the end of a lease), then closes the pool and stops the server.
	 */
	@Override
	public void close() throws Exception {
		try {
			Future<?> restart = this.restart;
			if (restart != null) {
				restart.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			this.restarter.shutdownNow();
			this.dataSource.close();
			this.postgres.close();
		}
	}

}
