package io.github.idempotency.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the redis store and of the Redis cache of the hybrid store.
 */
@ConfigurationProperties("idempotency.redis")
public class IdempotencyRedisProperties {

	/**
	 * First part of every Redis key: records are '<prefix>:{<workflow length>:<workflow>:<key>}',
	 * hybrid cache entries '<prefix>:cache:{...}'.
	 */
	private String keyPrefix = "idempotency";

	/**
	 * How many replicas must acknowledge a completion or failure (Redis WAIT) before it
	 * returns; 0 not to wait. Narrows, but does not close, the window in which a failover
	 * loses a record. Ignored (with a warning) on Redis Cluster.
	 */
	private int waitReplicas = 0;

	/**
	 * How long a completion or failure waits for wait-replicas replicas. When it passes, a
	 * warning is logged and the result stands.
	 */
	private Duration waitTimeout = Duration.ofSeconds(1);

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public int getWaitReplicas() {
		return this.waitReplicas;
	}

	public void setWaitReplicas(int waitReplicas) {
		this.waitReplicas = waitReplicas;
	}

	public Duration getWaitTimeout() {
		return this.waitTimeout;
	}

	public void setWaitTimeout(Duration waitTimeout) {
		this.waitTimeout = waitTimeout;
	}

}
