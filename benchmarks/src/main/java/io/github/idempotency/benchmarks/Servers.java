package io.github.idempotency.benchmarks;

import java.util.Map;

/**
 * Where the store servers are: the variables the project's tests read, defaulting to the
 * local servers.
 */
final class Servers {

	static final String POSTGRES_URL = env("IDEMPOTENCY_TEST_POSTGRES_URL",
			"jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

	static final String REDIS_URL = env("IDEMPOTENCY_TEST_REDIS_URL", "redis://127.0.0.1:6379");

	private Servers() {
	}

	static Map<String, Object> properties() {
		return Map.of("spring.datasource.url", POSTGRES_URL, "spring.data.redis.url", REDIS_URL);
	}

	private static String env(String name, String fallback) {
		String value = System.getenv(name);
		return (value != null && !value.isBlank()) ? value : fallback;
	}

}
