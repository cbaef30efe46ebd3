package io.github.idempotency.benchmarks;

import java.util.Map;

import javax.sql.DataSource;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import io.github.idempotency.store.IdempotencyStore;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The starter on one backend as its auto-configuration builds it from
 * {@code idempotency.backend}, with the {@link PaymentHandler} bean proxied; the keys of
 * {@link DuplicateKeys} are delivered once before the measurement.
 */
public abstract class StarterState {

	ConfigurableApplicationContext context;

	PaymentHandler handler;

	IdempotencyStore store;

	/**
	 * The value of {@code idempotency.backend}.
	 * @return the backend
	 */
	protected abstract String backend();

	/**
	 * More properties of the application.
	 * @return the properties
	 */
	protected Map<String, Object> properties() {
		return Map.of();
	}

	@Setup(Level.Trial)
	public void start() {
		this.context = BenchmarkContexts.starter(backend(), properties());
		this.handler = this.context.getBean(PaymentHandler.class);
		if (!AopUtils.isAopProxy(this.handler)) {
			throw new IllegalStateException("PaymentHandler is not proxied");
		}
		this.store = this.context.getBean(IdempotencyStore.class);
		if (!this.store.backend().equals(backend())) {
			throw new IllegalStateException("Expected the " + backend() + " store, got " + this.store.backend());
		}
		if (this.store.backend().equals("jdbc") || this.store.backend().equals("hybrid")) {
			// the benchmarks' own records of earlier runs out, the table vacuumed, as for the others
			JdbcClient jdbc = JdbcClient.create(this.context.getBean(DataSource.class));
			jdbc.sql("DELETE FROM idempotency_record WHERE workflow LIKE 'bench-%'").update();
			ServersState.vacuum(jdbc, "idempotency_record");
		}
		for (String key : DuplicateKeys.all()) {
			deliver(key);
		}
	}

	/**
	 * Delivers a key once, the way the benchmarks on this state call the handler.
	 * @param key the key
	 */
	protected void deliver(String key) {
		this.handler.charge(key);
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.context.close();
	}

}
