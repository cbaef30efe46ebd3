package io.github.idempotency.store.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The store before the compact record, as far as its records go: its own scripts
 * (copies of layout 0's {@code claim.lua}, {@code finish.lua} and {@code renew.lua},
 * under {@code layout0/}), which keep a record as a hash of one field per column. What a
 * node that has not been upgraded writes during a rolling upgrade.
 */
final class Layout0 {

	private static final RedisScript<List> CLAIM = script("claim.lua", List.class);

	private static final RedisScript<List> FINISH = script("finish.lua", List.class);

	private static final RedisScript<Long> RENEW = script("renew.lua", Long.class);

	private final StringRedisTemplate redis;

	Layout0(StringRedisTemplate redis) {
		this.redis = redis;
	}

	/** Claims as layout 0's store did; answers the outcome. */
	String claim(String key, long now, String owner, String fingerprint, Duration lease, Duration retention) {
		List<?> replies = this.redis.execute(CLAIM, List.of(key), String.valueOf(now), owner, fingerprint,
				String.valueOf(lease.toMillis()), String.valueOf(retention.toMillis()));
		return (String) ((List<?>) replies.get(0)).get(0);
	}

	/** Completes (or, with {@code FAILED}, fails) as layout 0's store did. */
	boolean finish(String key, long now, String owner, Duration retention, String status, String... values) {
		List<String> args = new ArrayList<>(List.of(String.valueOf(now), owner, String.valueOf(retention.toMillis()),
				status, String.valueOf(values.length)));
		args.addAll(List.of(values));
		List<?> replies = this.redis.execute(FINISH, List.of(key), args.toArray());
		return Long.valueOf(1L).equals(replies.get(0));
	}

	/** Saves a recovery point as layout 0's store did. */
	boolean saveRecoveryPoint(String key, long now, String owner, Duration lease, Duration retention,
			String recoveryPoint) {
		return Long.valueOf(1L).equals(this.redis.execute(RENEW, List.of(key), owner, String.valueOf(now),
				String.valueOf(now + lease.toMillis()), String.valueOf(retention.toMillis()), recoveryPoint));
	}

	private static <T> RedisScript<T> script(String name, Class<T> resultType) {
		try {
			return RedisScript.of(new ClassPathResource("layout0/" + name, Layout0.class)
				.getContentAsString(StandardCharsets.UTF_8), resultType);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
