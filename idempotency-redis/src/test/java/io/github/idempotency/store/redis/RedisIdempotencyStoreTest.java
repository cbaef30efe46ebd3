package io.github.idempotency.store.redis;

import java.time.Clock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

class RedisIdempotencyStoreTest extends IdempotencyStoreContract {

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
	protected IdempotencyStore createStore(Clock clock) {
		return new RedisIdempotencyStore(connectionFactory, "idempotency-test", clock);
	}

	@Test
	void aRenewalAndARecoveryPointSetARedisTimeToLiveOfLeasePlusRetention() {
		RenewalTimeToLive.assertRenewalsKeepLeasePlusRetention((RedisIdempotencyStore) this.store, this.clock,
				connectionFactory, id("k1"));
	}

}
