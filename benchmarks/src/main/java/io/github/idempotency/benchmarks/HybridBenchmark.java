package io.github.idempotency.benchmarks;

import java.util.Map;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The hybrid store: PostgreSQL is the source of truth, Redis a read-through cache of
 * finished records. A first delivery costs what the jdbc store costs (claim and complete
 * in PostgreSQL, each a commit) plus the cache write; a duplicate is answered from Redis
 * with one round trip and no database access.
 */
public class HybridBenchmark {

	@Benchmark
	public Receipt starterFirst(Starter state, Keys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt starterDuplicate(Starter state, DuplicateKeys keys) {
		return state.handler.charge(keys.next());
	}

	/**
	 * The starter with {@code idempotency.backend=hybrid}.
	 */
	@State(Scope.Benchmark)
	public static class Starter extends StarterState {

		@Override
		protected String backend() {
			return "hybrid";
		}

		@Override
		protected Map<String, Object> properties() {
			return StarterProperties.SERVERS;
		}

	}

}
