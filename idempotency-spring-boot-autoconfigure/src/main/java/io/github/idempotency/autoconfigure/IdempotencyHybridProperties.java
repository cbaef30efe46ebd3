package io.github.idempotency.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the hybrid store: Redis as a cache of finished records in front of the
 * jdbc store.
 */
@ConfigurationProperties("idempotency.hybrid")
public class IdempotencyHybridProperties {

	/**
	 * How long a finished record stays in the Redis cache at most; never longer than the
	 * record's own retention.
	 */
	private Duration cacheTtl = Duration.ofHours(1);

	public Duration getCacheTtl() {
		return this.cacheTtl;
	}

	public void setCacheTtl(Duration cacheTtl) {
		this.cacheTtl = cacheTtl;
	}

}
