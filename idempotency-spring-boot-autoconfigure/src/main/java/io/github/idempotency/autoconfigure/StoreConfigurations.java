package io.github.idempotency.autoconfigure;

import java.util.Map;

import org.springframework.util.Assert;

/**
 * The store configurations, in detection order: the first whose conditions match creates
 * the {@code IdempotencyStore}.
 */
final class StoreConfigurations {

	private static final Map<String, IdempotencyBackend> BACKENDS = Map.of(
			JdbcStoreConfiguration.class.getName(), IdempotencyBackend.JDBC,
			R2dbcStoreConfiguration.class.getName(), IdempotencyBackend.R2DBC,
			RedisStoreConfiguration.class.getName(), IdempotencyBackend.REDIS,
			HybridStoreConfiguration.class.getName(), IdempotencyBackend.HYBRID,
			MemoryStoreConfiguration.class.getName(), IdempotencyBackend.MEMORY);

	private StoreConfigurations() {
	}

	static IdempotencyBackend backendOf(String configurationClassName) {
		IdempotencyBackend backend = BACKENDS.get(configurationClassName);
		Assert.state(backend != null, () -> "Unknown store configuration " + configurationClassName);
		return backend;
	}

}
