package io.github.idempotency.store.redis;

import java.time.Clock;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.internal.EngineSuites;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

class RedisEngineTest extends EngineSuites {

	private static LettuceConnectionFactory connections;

	@BeforeAll
	static void connect() {
		connections = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connections.destroy();
	}

	/** The current test's key prefix, which the non-blocking store shares. */
	private final String prefix = "idempotency-test-" + UUID.randomUUID();

	@Override
	protected IdempotencyStore store(Clock clock) {
		return new RedisIdempotencyStore(connections, this.prefix, clock);
	}

	@Override
	protected ReactiveIdempotencyStore reactiveStore(Clock clock) {
		return new ReactiveRedisIdempotencyStore(connections, this.prefix, clock);
	}

}
