package io.github.idempotency.store.redis;

import java.time.Clock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.test.ReactiveIdempotencyStoreContract;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

class ReactiveRedisClusterIdempotencyStoreTest extends ReactiveIdempotencyStoreContract {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisConnections.cluster(TestServers.redisClusterNodes());
		// the factory opens its shared connection when first asked, blocking, as for any
		// reactive template: here, before a step runs on a non-blocking thread
		((ReactiveRedisConnectionFactory) connectionFactory).getReactiveConnection().closeLater().block();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected ReactiveIdempotencyStore createReactiveStore(Clock clock) {
		return new ReactiveRedisIdempotencyStore(connectionFactory, "idempotency-test", clock);
	}

	@Test
	void aClaimOfOneStoreIsFinishedByTheOther() {
		ReactiveAndBlocking.assertBothServeTheSameKeys(connectionFactory, this.clock, this.workflow);
	}

	@Test
	void aBatchThatReadsFirstAnswersDuplicatesAndClaimsTheRest() {
		ReactiveAndBlocking.assertReadFirstBatch(connectionFactory, this.clock, this.workflow);
	}

	@Test
	void scriptsThatTheServerLostAreSentAgain() {
		ReactiveAndBlocking.assertScriptsLoadedAgain(connectionFactory, this.clock, this.workflow);
	}

	@Test
	void aRecordOfLayout0IsReadAndClaimed() {
		ReactiveAndBlocking.assertLayout0(connectionFactory, this.clock, this.workflow);
	}

}
