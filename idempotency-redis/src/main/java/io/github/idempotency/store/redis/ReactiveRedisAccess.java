package io.github.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.lettuce.core.RedisNoScriptException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.RecordId;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.ReactiveRedisClusterConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * What the non-blocking store reaches Redis with: the reactive connections, the records'
 * keys and the clock, and the calls of the scripts ({@code EVALSHA}, {@code EVAL} on
 * {@code NOSCRIPT}), each answered as the blocking store's are (a reply per key, bulk
 * strings as bytes) so that both decode them with the same code. A batch's script is one
 * call per cluster hash slot (one on a single node), all sent before any answer arrives,
 * grouped as {@link SlotGroupedScript} groups them.
 */
final class ReactiveRedisAccess {

	private final ReactiveRedisConnectionFactory connectionFactory;

	private final String keyPrefix;

	private final Clock clock;

	ReactiveRedisAccess(ReactiveRedisConnectionFactory connectionFactory, String keyPrefix, Clock clock) {
		this.connectionFactory = connectionFactory;
		this.keyPrefix = keyPrefix;
		this.clock = clock;
	}

	/** The key of a record in UTF-8. */
	byte[] keyBytes(RecordId id) {
		return RedisAccess.bytes(RedisAccess.key(this.keyPrefix, id));
	}

	/** Now on the store's clock, in epoch milliseconds. */
	long now() {
		return this.clock.millis();
	}

	Clock clock() {
		return this.clock;
	}

	/**
	 * Runs {@code action} on a connection of the factory, closed once it is done (with the
	 * factory's shared connection, nothing is opened or closed per call).
	 */
	<T> Mono<T> withConnection(Function<ReactiveRedisConnection, Mono<T>> action) {
		return Mono.usingWhen(Mono.fromSupplier(this.connectionFactory::getReactiveConnection), action,
				ReactiveRedisConnection::closeLater);
	}

	/**
	 * Runs a script on one key.
	 * @param script the script
	 * @param key the key
	 * @param arguments its arguments
	 * @return the key's reply: the script's answer for one key as the blocking store reads
	 * it (an array's first element, a number as it is)
	 */
	Mono<Object> run(RedisScript<?> script, byte[] key, byte[]... arguments) {
		return withConnection((connection) -> eval(connection, script, new byte[][] { key }, arguments))
			.map((reply) -> {
				if (reply.size() != 1) {
					throw new IllegalStateException(
							"A Redis script answered " + reply.size() + " replies for one key");
				}
				return reply.get(0);
			});
	}

	/**
	 * Runs a batch's script on every key of {@code calls}: one call per hash slot on Redis
	 * Cluster, else one call.
	 * @param connection the connection
	 * @param script the script
	 * @param leading the arguments before those of the keys
	 * @param calls each key with its arguments
	 * @return the replies, a failed call's failure in them
	 */
	Mono<SlotGroupedScript.Replies> runAll(ReactiveRedisConnection connection, SlotGroupedScript script,
			List<?> leading, List<SlotGroupedScript.Call> calls) {
		List<int[]> groups = SlotGroupedScript.groups(calls, connection instanceof ReactiveRedisClusterConnection);
		SlotGroupedScript.Replies replies = new SlotGroupedScript.Replies(calls.size());
		return Flux.range(0, groups.size())
			.flatMap((g) -> eval(connection, script.script(), SlotGroupedScript.keys(calls, groups.get(g)),
					SlotGroupedScript.arguments(leading, calls, groups.get(g)))
				.<Object[]>map((reply) -> new Object[] { g, reply })
				.onErrorResume((ex) -> Mono.just(new Object[] { g, ex })))
			// one group after the other here: the replies are filled on one thread at a time
			.doOnNext((answer) -> {
				int[] group = groups.get((Integer) answer[0]);
				if (answer[1] instanceof Throwable failure) {
					replies.fail(unchecked(failure));
					return;
				}
				List<?> reply = (List<?>) answer[1];
				for (int i = 0; i < group.length; i++) {
					replies.replies[group[i]] = reply.get(i);
				}
			})
			.then(Mono.fromSupplier(() -> replies));
	}

	/**
	 * {@code EVALSHA}, sent again as {@code EVAL} on {@code NOSCRIPT}.
	 * @return the script's array, its bulk strings as bytes, a number alone as an array of
	 * one
	 */
	private static Mono<List<@Nullable Object>> eval(ReactiveRedisConnection connection, RedisScript<?> script,
			byte[][] keys, byte[][] arguments) {
		ByteBuffer[] keysAndArguments = new ByteBuffer[keys.length + arguments.length];
		for (int i = 0; i < keys.length; i++) {
			keysAndArguments[i] = ByteBuffer.wrap(keys[i]);
		}
		for (int i = 0; i < arguments.length; i++) {
			keysAndArguments[keys.length + i] = ByteBuffer.wrap(arguments[i]);
		}
		Flux<Object> replies = connection.scriptingCommands()
			.<Object>evalSha(script.getSha1(), ReturnType.MULTI, keys.length, duplicates(keysAndArguments))
			.onErrorResume(ReactiveRedisAccess::isNoScript,
					(ex) -> connection.scriptingCommands()
						.eval(ByteBuffer.wrap(RedisAccess.bytes(script.getScriptAsString())), ReturnType.MULTI,
								keys.length, duplicates(keysAndArguments)));
		// Lettuce emits a script's array as one element (a number alone, as a number)
		return replies.next().map((reply) -> (reply instanceof List<?> array) ? array : List.of(reply))
			.map((array) -> {
				List<@Nullable Object> plain = new ArrayList<>(array.size());
				for (Object element : array) {
					plain.add(plain(element));
				}
				return plain;
			});
	}

	/** The buffers again, each read from its start (a first call may have read them). */
	private static ByteBuffer[] duplicates(ByteBuffer[] buffers) {
		ByteBuffer[] copies = new ByteBuffer[buffers.length];
		for (int i = 0; i < buffers.length; i++) {
			copies[i] = buffers[i].duplicate();
		}
		return copies;
	}

	private static boolean isNoScript(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisNoScriptException
					|| (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"))) {
				return true;
			}
		}
		return false;
	}

	/** A reply as the blocking store reads it: bulk strings as bytes, arrays as lists. */
	static @Nullable Object plain(@Nullable Object reply) {
		if (reply instanceof ByteBuffer buffer) {
			return bytes(buffer);
		}
		if (reply instanceof List<?> list) {
			List<@Nullable Object> plain = new ArrayList<>(list.size());
			for (Object element : list) {
				plain.add(plain(element));
			}
			return plain;
		}
		return reply;
	}

	/** The remaining bytes of a buffer. */
	static byte[] bytes(ByteBuffer buffer) {
		byte[] bytes = new byte[buffer.remaining()];
		buffer.duplicate().get(bytes);
		return bytes;
	}

	/** A failure as the blocking store throws it: unchecked, Spring's translation kept. */
	static RuntimeException unchecked(Throwable failure) {
		return (failure instanceof RuntimeException unchecked) ? unchecked
				: new RedisSystemException("Redis failed: " + failure.getMessage(), failure);
	}

}
