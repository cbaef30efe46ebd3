package io.github.idempotency.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.async.RedisStringAsyncCommands;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The hand-written protocol: the batch claim script, or pipelined {@code SET NX GET PX}
 * on the shared Lettuce connection, and the batch completion script.
 */
@State(Scope.Benchmark)
public class RedisBatchBare {

	static final String PREFIX = "bench-bare-batch:{" + RedisBatchBenchmark.WORKFLOW + "}:";

	static final SetArgs CLAIM = SetArgs.Builder.nx().px(Long.parseLong(RedisBenchmark.Bare.LEASE_MS));

	ServersState servers;

	RedisStringAsyncCommands<byte[], byte[]> commands;

	// read once: a RedisScript made from a Resource checks the resource for changes on every call
	final RedisScript<List> claim = RedisScript.of(RedisBenchmark.script("claim_all.lua"), List.class);

	final RedisScript<List> complete = RedisScript.of(RedisBenchmark.script("complete_all.lua"), List.class);

	@Setup(Level.Trial)
	@SuppressWarnings("unchecked")
	public void finishDuplicates(ServersState servers) {
		this.servers = servers;
		// the connection factory's shared native connection: closing the Spring
		// connection leaves it open
		try (RedisConnection connection = servers.redisConnections.getConnection()) {
			this.commands = (RedisStringAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
		}
		RedisBatchBenchmark.clear(servers.redis, PREFIX + "*");
		for (String key : RedisBatchBenchmark.Batch.all()) {
			servers.redis.opsForValue()
				.set(PREFIX + key, "C|" + servers.writer.writeValueAsString(Receipt.of(key)),
						Duration.ofMillis(Long.parseLong(RedisBenchmark.Bare.RETENTION_MS)));
		}
	}

	static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	static byte[] await(RedisFuture<byte[]> future) {
		return LettuceFutures.awaitOrCancel(future, 10, TimeUnit.SECONDS);
	}

}
