package io.github.idempotency.store.hybrid;

import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The hybrid store with its cache on a Redis Cluster, in front of the jdbc store on a real
 * PostgreSQL.
 */
class HybridClusterIdempotencyStoreTest extends IdempotencyStoreContract {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.cluster(TestServers.redisClusterNodes());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new HybridIdempotencyStore(HybridIdempotencyStoreTest.sourceOfTruth(clock), connectionFactory,
				"idempotency-test", Duration.ofHours(1), clock);
	}

}
