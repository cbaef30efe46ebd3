package io.github.idempotency.store.redis;

import java.time.Clock;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

import io.github.idempotency.internal.BatchesHoldingEachOthersKeysSuite;
import io.github.idempotency.internal.ProtocolBehaviourSuite;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The engine's suites on the redis store and Redis.
 */
class RedisEngineTest {

	private static LettuceConnectionFactory connections;

	@BeforeAll
	static void connect() {
		connections = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connections.destroy();
	}

	static RedisIdempotencyStore store(Clock clock) {
		return new RedisIdempotencyStore(connections, "idempotency-test-" + UUID.randomUUID(), clock);
	}

	@Nested
	class Protocol extends ProtocolBehaviourSuite {

		@Override
		protected IdempotencyStore store(Clock clock) {
			return RedisEngineTest.store(clock);
		}

	}

	@Nested
	class BatchesHoldingEachOthersKeys extends BatchesHoldingEachOthersKeysSuite {

		@Override
		protected IdempotencyStore store() {
			return RedisEngineTest.store(Clock.systemUTC());
		}

	}

}
