package io.github.idempotency.benchmarks;

import java.util.Map;

/**
 * The starter's store settings in the benchmarks: its own table and key prefix, so the
 * benchmarks never touch the records of the project's tests on the same servers.
 */
final class StarterProperties {

	static final String TABLE = "bench_idempotency_record";

	static final String KEY_PREFIX = "bench-idempotency";

	static final Map<String, Object> SERVERS = Map.of("idempotency.jdbc.initialize-schema", "always",
			"idempotency.jdbc.table-name", TABLE, "idempotency.redis.key-prefix", KEY_PREFIX);

	private StarterProperties() {
	}

}
