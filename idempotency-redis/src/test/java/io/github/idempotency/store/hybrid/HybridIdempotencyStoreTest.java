package io.github.idempotency.store.hybrid;

import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The hybrid store on a real Redis in front of its source of truth, the jdbc store on a
 * real PostgreSQL.
 */
class HybridIdempotencyStoreTest extends IdempotencyStoreContract {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.standalone(TestServers.redisUrl());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	static IdempotencyStore sourceOfTruth(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.postgres(), "idempotency_record", Duration.ofSeconds(5), clock);
	}

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new HybridIdempotencyStore(sourceOfTruth(clock), connectionFactory, "idempotency-test",
				Duration.ofHours(1), clock);
	}

}
