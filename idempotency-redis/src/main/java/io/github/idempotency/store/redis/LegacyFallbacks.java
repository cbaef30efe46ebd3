package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Everything the store does only for older records, older servers and other clients, each
 * with when it ends:
 * <ul>
 * <li><b>Records of layout 0</b>, a hash of one field per column, written by version
 * 0.1.0. {@code SET ... NX GET} and {@code GET} answer {@code WRONGTYPE} on such a key
 * ({@link #isLayout0}): a claim then goes to {@code claim.lua}, whose {@code record.lua}
 * reads both layouts ({@code decode_hash}) and writes layout 1 on the record's next
 * change, and {@code find} reads the hash ({@link #readLayout0}). Reading them must stay
 * as long as one can exist: a record of layout 0 answered as absent would run a finished
 * operation again. Removed in 1.0 together with {@code decode_hash}; an application on
 * 0.1.0 first runs a later 0.x release for longer than its longest retention plus its
 * lease, after which every record of layout 0 has expired or been rewritten.</li>
 * <li><b>Redis before 7.0</b>, which refuses {@code SET} with both {@code NX} and
 * {@code GET} ({@code ERR syntax error}, {@link #refusesSetNxGet}): from the first refusal
 * on, every claim of the store runs {@code claim.lua} ({@link #claimsByScriptOnly}), with
 * one INFO. Removed in 1.0, whose minimum is Redis 7.0.</li>
 * <li><b>A connection that is not Lettuce's</b> (Jedis) has no asynchronous API to send a
 * batch's calls before awaiting them ({@link #lettuceScripting} answers {@code null}): a
 * batch then goes key by key, as the store SPI's default does. This stays while Spring
 * Data Redis offers such a client.</li>
 * </ul>
 */
final class LegacyFallbacks {

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	/** Set once the server refused {@code SET ... NX GET}: claims by script. */
	private volatile boolean claimByScriptOnly;

	/**
	 * Whether every claim runs {@code claim.lua}: the server refused {@code SET ... NX GET}.
	 * @return {@code true} on Redis before 7.0, once a claim found out
	 */
	boolean claimsByScriptOnly() {
		return this.claimByScriptOnly;
	}

	/**
	 * Whether a failed {@code SET ... NX GET} leaves the claim to {@code claim.lua}: the key
	 * holds a record of layout 0, or the server is older than 7.0 (from then on, every claim
	 * runs the script).
	 * @param error the failure, or the error text a script answered for the command
	 * @return {@code true} to claim by script; {@code false} for a failure to throw
	 */
	boolean leavesClaimToScript(Object error) {
		if (isLayout0(error)) {
			return true;
		}
		if (refusesSetNxGet(error)) {
			if (!this.claimByScriptOnly) {
				logger.info("This Redis server does not take SET with both NX and GET (Redis 7.0 or later does): "
						+ "every claim runs the claim script");
				this.claimByScriptOnly = true;
			}
			return true;
		}
		return false;
	}

	/**
	 * Whether Redis answered {@code WRONGTYPE}: the key holds a hash, a record of layout 0.
	 * @param error a failure, or an error text
	 * @return {@code true} for {@code WRONGTYPE}
	 */
	static boolean isLayout0(Object error) {
		return startsWith(error, "WRONGTYPE");
	}

	/**
	 * Whether Redis refused {@code SET ... NX GET}, as servers before 7.0 do.
	 * @param error a failure, or an error text
	 * @return {@code true} for {@code ERR syntax error}
	 */
	static boolean refusesSetNxGet(Object error) {
		return startsWith(error, "ERR syntax error");
	}

	private static boolean startsWith(Object error, String prefix) {
		if (error instanceof String text) {
			return text.startsWith(prefix);
		}
		for (Throwable cause = (Throwable) error; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Reads a record of layout 0 as it is.
	 * @param redis the template
	 * @param id the record's id
	 * @param key its key
	 * @return the record, or {@code null} when the key holds nothing
	 */
	static @Nullable IdempotencyRecord readLayout0(StringRedisTemplate redis, RecordId id, String key) {
		Map<String, String> fields = new HashMap<>();
		redis.<String, String>opsForHash().entries(key).forEach(fields::put);
		return layout0(id, fields);
	}

	/**
	 * A record of layout 0 from its hash's fields.
	 * @param id the record's id
	 * @param fields the fields of its hash
	 * @return the record, or {@code null} when there are none (the key holds nothing)
	 */
	static @Nullable IdempotencyRecord layout0(RecordId id, Map<String, String> fields) {
		if (fields.isEmpty()) {
			return null;
		}
		return new IdempotencyRecord(id, RecordStatus.valueOf(required(fields, "status")), fields.get("fingerprint"),
				required(fields, "owner"), Integer.parseInt(fields.get("attempt")), instant(fields, "lease_until"),
				fields.get("recovery_point"), fields.get("response"), fields.get("error_type"),
				fields.get("error_message"), instant(fields, "created_at"), instant(fields, "updated_at"),
				instant(fields, "expires_at"));
	}

	/** A field every stored record of layout 0 has. */
	private static String required(Map<String, String> fields, String name) {
		return Objects.requireNonNull(fields.get(name), () -> "the stored record has no " + name);
	}

	private static Instant instant(Map<String, String> fields, String name) {
		return Instant.ofEpochMilli(Long.parseLong(fields.get(name)));
	}

	/**
	 * Lettuce's asynchronous scripting commands behind a connection.
	 * @param connection a connection of the factory
	 * @return the commands, or {@code null} when the connection is not Lettuce's (a batch
	 * then goes key by key)
	 */
	@SuppressWarnings("unchecked")
	static @Nullable RedisScriptingAsyncCommands<byte[], byte[]> lettuceScripting(RedisConnection connection) {
		return (connection.getNativeConnection() instanceof RedisScriptingAsyncCommands<?, ?> lettuce)
				? (RedisScriptingAsyncCommands<byte[], byte[]>) lettuce : null;
	}

}
