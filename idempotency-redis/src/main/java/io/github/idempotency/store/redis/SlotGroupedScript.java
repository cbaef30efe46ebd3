package io.github.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One script run on many keys in as few calls and round trips as Redis allows, through
 * Lettuce's asynchronous API: on a single node (or Sentinel) one call with every key; on
 * Redis Cluster one call per hash slot (the keys of one script must share a slot), every
 * call sent before any answer is awaited, so that each node costs one round trip. The
 * script takes its keys in order and, after some leading arguments, the arguments of each
 * key one key after the other; it answers an array with one reply per key.
 * <p>
 * Each call is {@code EVALSHA}, sent again as {@code EVAL} (which loads the script) when
 * the node answers {@code NOSCRIPT}. Spring Data Redis's own fallback does not apply to
 * pipelined or asynchronous calls, hence this class.
 */
final class SlotGroupedScript {

	/** Nothing to do once every call answered. */
	static final Consumer<RedisConnection> NOTHING_AFTERWARDS = (connection) -> {
	};

	private final RedisScript<?> script;

	SlotGroupedScript(RedisScript<?> script) {
		this.script = script;
	}

	/** The script, for {@link ReactiveRedisAccess}, which groups the calls as this class does. */
	RedisScript<?> script() {
		return this.script;
	}

	/**
	 * Runs the script on every key of {@code calls}.
	 * @param connectionFactory the connections
	 * @param leading the arguments before those of the keys
	 * @param calls each key with its arguments
	 * @param timeout how long to wait for all the answers together
	 * @param afterwards what to do on the same connection once every call answered
	 * @return the replies, or {@code null} when the connection is not Lettuce's (the
	 * caller then goes key by key, see {@link LegacyFallbacks})
	 */
	@Nullable Replies run(RedisConnectionFactory connectionFactory, List<?> leading, List<Call> calls,
			Duration timeout, Consumer<RedisConnection> afterwards) {
		RedisConnection connection = connectionFactory.getConnection();
		try {
			RedisScriptingAsyncCommands<byte[], byte[]> commands = LegacyFallbacks.lettuceScripting(connection);
			if (commands == null) {
				return null;
			}
			List<int[]> groups = groups(calls, connection instanceof RedisClusterConnection);
			List<byte[][]> keys = new ArrayList<>(groups.size());
			List<byte[][]> arguments = new ArrayList<>(groups.size());
			List<RedisFuture<List<Object>>> sent = new ArrayList<>(groups.size());
			for (int[] group : groups) {
				keys.add(keys(calls, group));
				arguments.add(arguments(leading, calls, group));
				sent.add(commands.evalsha(this.script.getSha1(), ScriptOutputType.MULTI, keys.get(keys.size() - 1),
						arguments.get(arguments.size() - 1)));
			}
			Replies replies = new Replies(calls.size());
			long deadline = System.nanoTime() + timeout.toNanos();
			for (int g = 0; g < groups.size(); g++) {
				try {
					List<Object> reply;
					try {
						reply = await(sent.get(g), deadline);
					}
					catch (RedisNoScriptException ex) {
						reply = await(commands.eval(this.script.getScriptAsString(), ScriptOutputType.MULTI,
								keys.get(g), arguments.get(g)), deadline);
					}
					int[] group = groups.get(g);
					for (int i = 0; i < group.length; i++) {
						replies.replies[group[i]] = reply.get(i);
					}
				}
				catch (RuntimeException ex) {
					replies.fail(ex);
				}
			}
			if (replies.failure() == null) {
				afterwards.accept(connection);
			}
			return replies;
		}
		finally {
			connection.close();
		}
	}

	/**
	 * The positions of the calls, grouped by hash slot on a cluster (in their order within
	 * each group), else all in one group.
	 */
	static List<int[]> groups(List<Call> calls, boolean cluster) {
		if (!cluster) {
			return List.of(IntStream.range(0, calls.size()).toArray());
		}
		Map<Integer, List<Integer>> slots = new LinkedHashMap<>();
		for (int i = 0; i < calls.size(); i++) {
			slots.computeIfAbsent(SlotHash.getSlot(calls.get(i).key()), (slot) -> new ArrayList<>()).add(i);
		}
		return slots.values().stream().map((group) -> group.stream().mapToInt(Integer::intValue).toArray()).toList();
	}

	static byte[][] keys(List<Call> calls, int[] group) {
		byte[][] keys = new byte[group.length][];
		for (int i = 0; i < group.length; i++) {
			keys[i] = calls.get(group[i]).key();
		}
		return keys;
	}

	static byte[][] arguments(List<?> leading, List<Call> calls, int[] group) {
		int count = leading.size();
		for (int i : group) {
			count += calls.get(i).arguments().length;
		}
		byte[][] arguments = new byte[count][];
		int next = 0;
		for (Object argument : leading) {
			arguments[next++] = argument(argument);
		}
		for (int i : group) {
			byte[][] own = calls.get(i).arguments();
			System.arraycopy(own, 0, arguments, next, own.length);
			next += own.length;
		}
		return arguments;
	}

	/**
	 * Lettuce's wait for one reply, bounded by what is left until {@code deadline}: a
	 * timeout cancels the command, a failure is thrown as Lettuce's exception.
	 */
	private static <T> T await(RedisFuture<T> future, long deadline) {
		// at least a nanosecond: Lettuce waits without a bound for a timeout of 0
		return LettuceFutures.awaitOrCancel(future, Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
	}

	/** An argument as sent: bytes as they are, anything else as its text in UTF-8. */
	static byte[] argument(@Nullable Object argument) {
		return (argument instanceof byte[] bytes) ? bytes : bytes(String.valueOf(argument));
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * One key of the batch and the script's arguments for it.
	 *
	 * @param key the key, in UTF-8
	 * @param arguments its arguments, as sent
	 */
	record Call(byte[] key, byte[]... arguments) {
	}

	/**
	 * What the calls answered: a reply per key as Lettuce decoded it (bulk strings as
	 * bytes), {@code null} where its call failed.
	 */
	static final class Replies {

		final @Nullable Object[] replies;

		private @Nullable RuntimeException failure;

		Replies(int size) {
			this.replies = new Object[size];
		}

		/** Adds a failure: the first one, or suppressed in it. */
		void fail(RuntimeException ex) {
			if (this.failure == null) {
				this.failure = ex;
			}
			else if (this.failure != ex) {
				this.failure.addSuppressed(ex);
			}
		}

		/**
		 * The first failure of a call, the others suppressed in it.
		 * @return the failure, or {@code null} when every call answered
		 */
		@Nullable RuntimeException failure() {
			return this.failure;
		}

	}

}
