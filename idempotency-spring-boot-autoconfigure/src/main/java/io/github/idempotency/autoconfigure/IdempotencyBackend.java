package io.github.idempotency.autoconfigure;

/**
 * The stores {@code idempotency.backend} can name.
 */
public enum IdempotencyBackend {

	/** One database table through the application's {@code DataSource}. */
	JDBC,

	/**
	 * The jdbc store's table through the application's R2DBC {@code ConnectionFactory},
	 * non-blocking (PostgreSQL, MariaDB).
	 */
	R2DBC,

	/** One Redis string per record through the application's {@code RedisConnectionFactory}. */
	REDIS,

	/** Redis as a read-through cache of finished records in front of {@code jdbc}. */
	HYBRID,

	/** This JVM's memory: for tests and demos only. */
	MEMORY

}
