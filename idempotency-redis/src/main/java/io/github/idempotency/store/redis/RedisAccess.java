package io.github.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.RecordId;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.Assert;

/**
 * What every piece of the store reaches Redis with: the connections, a template on them,
 * the records' keys and the clock, and the call of a script on one key.
 */
final class RedisAccess {

	/** Script arguments: bytes as they are, anything else as its text. */
	static final RedisSerializer<Object> ARGUMENTS = new RedisSerializer<>() {

		@Override
		public byte[] serialize(@Nullable Object value) {
			return SlotGroupedScript.argument(value);
		}

		@Override
		public @Nullable Object deserialize(byte @Nullable [] bytes) {
			return bytes;
		}

	};

	/** Script replies: bulk strings as bytes. */
	@SuppressWarnings("rawtypes")
	static final RedisSerializer RESULT = RedisSerializer.byteArray();

	final RedisConnectionFactory connectionFactory;

	final StringRedisTemplate redis;

	/** How long a batch waits for all its replies: the client's command timeout. */
	final Duration batchTimeout;

	private final String keyPrefix;

	private final Clock clock;

	RedisAccess(RedisConnectionFactory connectionFactory, String keyPrefix, Clock clock) {
		this.connectionFactory = connectionFactory;
		this.redis = new StringRedisTemplate(connectionFactory);
		// the store's own callbacks never close the connection: no guarding proxy per call
		this.redis.setExposeConnection(true);
		this.batchTimeout = (connectionFactory instanceof LettuceConnectionFactory lettuce)
				? Duration.ofMillis(lettuce.getTimeout()) : Duration.ofMinutes(1);
		this.keyPrefix = keyPrefix;
		this.clock = clock;
	}

	/**
	 * The Redis key of a record.
	 * @param id the record
	 * @return {@code <prefix>:{<workflow length>:<workflow>:<key>}}
	 */
	String key(RecordId id) {
		return key(this.keyPrefix, id);
	}

	/**
	 * The Redis key of a record, the same for every store of this package.
	 * @param keyPrefix the store's prefix
	 * @param id the record
	 * @return {@code <prefix>:{<workflow length>:<workflow>:<key>}}
	 */
	static String key(String keyPrefix, RecordId id) {
		return keyPrefix + ":{" + id.workflow().length() + ":" + id.workflow() + ":" + id.key() + "}";
	}

	/**
	 * Checks a key prefix: not empty, and without braces, which would move the cluster hash
	 * tag.
	 * @param keyPrefix the prefix
	 */
	static void checkKeyPrefix(String keyPrefix) {
		Assert.hasText(keyPrefix, "'keyPrefix' must not be empty");
		Assert.isTrue(keyPrefix.indexOf('{') < 0 && keyPrefix.indexOf('}') < 0,
				"'keyPrefix' must not contain braces: they would move the cluster hash tag");
	}

	/** The key of a record in UTF-8. */
	byte[] keyBytes(RecordId id) {
		return bytes(key(id));
	}

	/** Now on the store's clock, in epoch milliseconds. */
	long now() {
		return this.clock.millis();
	}

	Clock clock() {
		return this.clock;
	}

	/**
	 * Runs a script on one key, its arguments sent as they are (bytes) or as their text,
	 * its bulk replies answered as bytes.
	 */
	@SuppressWarnings("unchecked")
	<T> @Nullable T run(RedisScript<T> script, String key, Object... args) {
		return this.redis.execute(script, ARGUMENTS, (RedisSerializer<T>) RESULT, List.of(key), args);
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/** A number as a script argument: its decimal text. */
	static byte[] number(long value) {
		return bytes(Long.toString(value));
	}

	/** A reply as text: bulk strings decoded from UTF-8. */
	static String text(Object reply) {
		return (reply instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(reply);
	}

}
