package io.github.idempotency.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.async.RedisStringAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Many {@code SET key value NX GET PX ttl} commands sent one after the other through
 * Lettuce's asynchronous API before any answer is awaited: the claims of a batch in one
 * round trip per node, with no script. On Redis Cluster, Lettuce sends each command to the
 * node of its key's slot; the commands of one key stay in the order given (one connection
 * per node), so a key named twice is written by its first command only and the second
 * answers the first's record.
 */
final class PipelinedClaims {

	/** The answer of a command that wrote its value (the key was free). */
	static final Object WRITTEN = new Object();

	private PipelinedClaims() {
	}

	/**
	 * Sends every command, then awaits every answer.
	 * @param connectionFactory the connections
	 * @param keys the keys
	 * @param values the value to write at each key when it is free
	 * @param ttls the time to live of each, in milliseconds
	 * @param timeout how long to wait for all the answers together
	 * @return per key {@link #WRITTEN}, the value found ({@code byte[]}, nothing written),
	 * or the {@link RuntimeException} its command failed with; {@code null} when the
	 * connection is not Lettuce's (the caller then goes another way)
	 */
	static @Nullable Object @Nullable [] run(RedisConnectionFactory connectionFactory, List<byte[]> keys,
			List<byte[]> values, long[] ttls, Duration timeout) {
		RedisConnection connection = connectionFactory.getConnection();
		try {
			if (!(connection.getNativeConnection() instanceof RedisStringAsyncCommands<?, ?> lettuce)) {
				return null;
			}
			@SuppressWarnings("unchecked")
			RedisStringAsyncCommands<byte[], byte[]> commands = (RedisStringAsyncCommands<byte[], byte[]>) lettuce;
			List<RedisFuture<byte[]>> sent = new ArrayList<>(keys.size());
			for (int i = 0; i < keys.size(); i++) {
				sent.add(commands.setGet(keys.get(i), values.get(i), SetArgs.Builder.nx().px(ttls[i])));
			}
			Object[] answers = new Object[keys.size()];
			long deadline = System.nanoTime() + timeout.toNanos();
			for (int i = 0; i < answers.length; i++) {
				try {
					// at least a nanosecond: Lettuce waits without a bound for a timeout of 0
					byte[] found = LettuceFutures.awaitOrCancel(sent.get(i), Math.max(1, deadline - System.nanoTime()),
							TimeUnit.NANOSECONDS);
					answers[i] = (found != null) ? found : WRITTEN;
				}
				catch (RuntimeException ex) {
					answers[i] = ex;
				}
			}
			return answers;
		}
		finally {
			connection.close();
		}
	}

}
