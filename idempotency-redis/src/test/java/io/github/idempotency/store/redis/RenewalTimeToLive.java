package io.github.idempotency.store.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the contract cannot see: the time to live Redis itself gives a record, on real
 * time. A renewal and a recovery point must leave it at lease + retention, as a claim
 * does, so that Redis does not drop a crashed run's attempt and recovery point before the
 * takeover reads them; only the lease would lose them when the retention is short.
 */
final class RenewalTimeToLive {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofSeconds(10);

	/** Generous for the real time a few round trips take on a slow machine. */
	private static final long SLACK_MILLIS = 5_000;

	private RenewalTimeToLive() {
	}

	static void assertRenewalsKeepLeasePlusRetention(RedisIdempotencyStore store, MutableClock clock,
			RedisConnectionFactory connectionFactory, RecordId id) {
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		String key = store.key(id);
		ClaimResult claim = store.claim(new ClaimRequest(id, "owner-1", null, LEASE, RETENTION));
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertTimeToLive(redis, key, "after the claim");
		ClaimHandle handle = claim.acquiredHandle();
		for (int renewal = 1; renewal <= 4; renewal++) {
			clock.advance(LEASE.dividedBy(3).multipliedBy(2));
			assertThat(handle.renew()).isTrue();
			assertTimeToLive(redis, key, "after renewal " + renewal);
		}
		clock.advance(LEASE.dividedBy(3).multipliedBy(2));
		assertThat(handle.saveRecoveryPoint("stock-reserved")).isTrue();
		assertTimeToLive(redis, key, "after the recovery point");
	}

	private static void assertTimeToLive(StringRedisTemplate redis, String key, String when) {
		Long ttl = redis.getExpire(key, TimeUnit.MILLISECONDS);
		long full = LEASE.plus(RETENTION).toMillis();
		assertThat(ttl).as("the PTTL of the record " + when + " (lease " + LEASE.toMillis() + " ms, retention "
				+ RETENTION.toMillis() + " ms)").isNotNull().isGreaterThan(LEASE.toMillis())
			.isBetween(full - SLACK_MILLIS, full);
	}

}
