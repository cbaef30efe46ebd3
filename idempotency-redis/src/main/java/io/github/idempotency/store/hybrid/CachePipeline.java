package io.github.idempotency.store.hybrid;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisHashAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The cache commands of a batch, pipelined: every command sent through Lettuce's
 * asynchronous API before any answer is awaited, so that a batch costs one round trip on
 * a single node and one per node on Redis Cluster (each command names one key, which
 * Lettuce routes to its node). A connection that is not Lettuce's answers {@code null}:
 * the caller then goes key by key.
 */
final class CachePipeline {

	private final RedisConnectionFactory connectionFactory;

	private final Duration timeout;

	CachePipeline(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
		this.timeout = (connectionFactory instanceof LettuceConnectionFactory lettuce)
				? Duration.ofMillis(lettuce.getTimeout()) : Duration.ofMinutes(1);
	}

	/**
	 * Reads cache hashes ({@code HGETALL} each).
	 * @param keys the cache keys
	 * @return the fields of each key (empty when absent), in the order of the keys, or
	 * {@code null} without a Lettuce connection
	 */
	@Nullable List<Map<String, String>> readAll(List<String> keys) {
		RedisConnection connection = this.connectionFactory.getConnection();
		try {
			if (!(connection.getNativeConnection() instanceof RedisHashAsyncCommands<?, ?> lettuce)) {
				return null;
			}
			@SuppressWarnings("unchecked")
			RedisHashAsyncCommands<byte[], byte[]> hashes = (RedisHashAsyncCommands<byte[], byte[]>) lettuce;
			List<RedisFuture<Map<byte[], byte[]>>> sent = new ArrayList<>(keys.size());
			keys.forEach((key) -> sent.add(hashes.hgetall(bytes(key))));
			long deadline = System.nanoTime() + this.timeout.toNanos();
			List<Map<String, String>> read = new ArrayList<>(keys.size());
			for (RedisFuture<Map<byte[], byte[]>> future : sent) {
				Map<String, String> fields = new HashMap<>();
				await(future, deadline).forEach((name, value) -> fields.put(text(name), text(value)));
				read.add(fields);
			}
			return read;
		}
		finally {
			connection.close();
		}
	}

	/**
	 * Runs {@code script} once per key.
	 * @param script a script of one key
	 * @param keys the keys
	 * @param arguments the arguments of each key's call
	 * @return {@code true}, or {@code false} without a Lettuce connection
	 */
	boolean runAll(RedisScript<?> script, List<String> keys, List<List<String>> arguments) {
		RedisConnection connection = this.connectionFactory.getConnection();
		try {
			if (!(connection.getNativeConnection() instanceof RedisScriptingAsyncCommands<?, ?> lettuce)) {
				return false;
			}
			@SuppressWarnings("unchecked")
			RedisScriptingAsyncCommands<byte[], byte[]> scripts = (RedisScriptingAsyncCommands<byte[], byte[]>) lettuce;
			List<RedisFuture<Object>> sent = new ArrayList<>(keys.size());
			for (int i = 0; i < keys.size(); i++) {
				sent.add(scripts.evalsha(script.getSha1(), ScriptOutputType.INTEGER, new byte[][] { bytes(keys.get(i)) },
						bytes(arguments.get(i))));
			}
			long deadline = System.nanoTime() + this.timeout.toNanos();
			for (int i = 0; i < keys.size(); i++) {
				try {
					await(sent.get(i), deadline);
				}
				catch (RedisNoScriptException ex) {
					await(scripts.eval(script.getScriptAsString(), ScriptOutputType.INTEGER,
							new byte[][] { bytes(keys.get(i)) }, bytes(arguments.get(i))), deadline);
				}
			}
			return true;
		}
		finally {
			connection.close();
		}
	}

	/**
	 * Lettuce's wait for one reply, bounded by what is left until {@code deadline}: a
	 * timeout cancels the command, a failure is thrown as Lettuce's exception.
	 */
	private static <T> T await(RedisFuture<T> future, long deadline) {
		// at least a nanosecond: Lettuce waits without a bound for a timeout of 0
		return LettuceFutures.awaitOrCancel(future, Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	private static byte[][] bytes(List<String> values) {
		byte[][] bytes = new byte[values.size()][];
		for (int i = 0; i < values.size(); i++) {
			bytes[i] = bytes(values.get(i));
		}
		return bytes;
	}

}
