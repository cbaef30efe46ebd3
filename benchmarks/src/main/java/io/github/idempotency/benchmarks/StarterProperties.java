package io.github.idempotency.benchmarks;

import java.util.Map;

/**
 * The starter's store settings in the benchmarks: the shipped table (its workflow,
 * {@code bench-charge}, is the benchmarks' own) and a key prefix of its own.
 */
final class StarterProperties {

	static final String KEY_PREFIX = "bench-idempotency";

	static final Map<String, Object> SERVERS = Map.of("idempotency.jdbc.initialize-schema", "always",
			"idempotency.redis.key-prefix", KEY_PREFIX);

	private StarterProperties() {
	}

}
