package io.github.idempotency.store.redis;

import java.time.Clock;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.internal.EngineSuites;
import io.github.idempotency.store.IdempotencyStore;
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

	@Override
	protected IdempotencyStore store(Clock clock) {
		return new RedisIdempotencyStore(connections, "idempotency-test-" + UUID.randomUUID(), clock);
	}

}
