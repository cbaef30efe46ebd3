package io.github.idempotency.store.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

class ReactiveRedisIdempotencyStoreTest extends ReactiveRedisStoreCases {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected LettuceConnectionFactory connectionFactory() {
		return connectionFactory;
	}

}
