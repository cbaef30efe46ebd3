package io.github.idempotency.benchmarks;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * The clients of {@link ServersState}, on MariaDB ({@link BenchmarkContexts#mariadb()}).
 */
@State(Scope.Benchmark)
public class MariaDbServers extends ServersState {

	@Override
	protected ConfigurableApplicationContext context() {
		return BenchmarkContexts.mariadb();
	}

}
