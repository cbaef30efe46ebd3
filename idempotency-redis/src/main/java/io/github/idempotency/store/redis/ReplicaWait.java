package io.github.idempotency.store.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.DecoratedRedisConnection;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.util.Assert;

/**
 * Redis {@code WAIT} after a completion or failure, on the connection that wrote it, until
 * that many replicas hold it or the timeout passed (then a WARN, and the result stands).
 * Ignored, with one WARN, on Redis Cluster, where the command would not run on the
 * connection that wrote the record.
 */
final class ReplicaWait {

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	private final AtomicBoolean clusterWarned = new AtomicBoolean();

	private int replicas;

	private Duration timeout = Duration.ofSeconds(1);

	void set(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "'replicas' must not be negative");
		Assert.isTrue(replicas == 0 || (!timeout.isNegative() && !timeout.isZero()),
				"'timeout' must be positive: WAIT with a timeout of 0 blocks for ever");
		this.replicas = replicas;
		this.timeout = timeout;
	}

	/** Whether completions wait for replicas. */
	boolean isOn() {
		return this.replicas > 0;
	}

	/**
	 * Waits on the connection the session of {@code operations} holds, and reports.
	 * @param operations operations bound to the connection that wrote
	 * @param what what was written, for the WARN
	 */
	// the callback answers null on Redis Cluster, as RedisCallback allows (T extends @Nullable
	// Object): NullAway reads that bound only in JSpecify mode, which Java 17 does not run
	@SuppressWarnings("NullAway")
	void await(RedisOperations<?, ?> operations, String what) {
		report(operations.execute((RedisCallback<Object>) this::await), what);
	}

	/**
	 * Sends {@code WAIT} on the connection that wrote.
	 * @return how many replicas acknowledged, or {@code null} on Redis Cluster
	 */
	@Nullable Object await(RedisConnection connection) {
		RedisConnection target = (connection instanceof DecoratedRedisConnection decorated) ? decorated.getDelegate()
				: connection;
		if (target instanceof RedisClusterConnection) {
			return null;
		}
		long timeout = this.timeout.toMillis();
		if (target.getNativeConnection() instanceof BaseRedisAsyncCommands<?, ?> lettuce) {
			// the connection Spring Data Redis's Lettuce connection sends its commands on
			return LettuceFutures.awaitOrCancel(lettuce.waitForReplication(this.replicas, timeout), timeout + 5000,
					TimeUnit.MILLISECONDS);
		}
		return target.execute("WAIT", RedisAccess.number(this.replicas), RedisAccess.number(timeout));
	}

	/**
	 * Warns when fewer replicas than asked acknowledged, or once that Redis Cluster ignores
	 * the wait.
	 * @param acknowledged what {@link #await(RedisConnection)} answered
	 * @param what what was written
	 */
	void report(@Nullable Object acknowledged, String what) {
		if (acknowledged == null) {
			if (this.clusterWarned.compareAndSet(false, true)) {
				logger.warn("idempotency.redis.wait-replicas is ignored on Redis Cluster: WAIT would not run on "
						+ "the connection that wrote the record");
			}
		}
		else if (!(acknowledged instanceof Long count) || count < this.replicas) {
			logger.warn("Only " + acknowledged + " of " + this.replicas + " Redis replicas acknowledged " + what
					+ " within " + this.timeout + "; a failover now could lose it");
		}
	}

}
