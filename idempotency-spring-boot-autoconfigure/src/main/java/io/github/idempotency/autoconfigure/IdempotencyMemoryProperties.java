package io.github.idempotency.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the memory store.
 */
@ConfigurationProperties("idempotency.memory")
public class IdempotencyMemoryProperties {

	/**
	 * How often expired records are dropped from memory; 0 turns the cleanup off (the store
	 * then grows with every key it has seen).
	 */
	private Duration cleanupInterval = Duration.ofMinutes(1);

	public Duration getCleanupInterval() {
		return this.cleanupInterval;
	}

	public void setCleanupInterval(Duration cleanupInterval) {
		this.cleanupInterval = cleanupInterval;
	}

}
