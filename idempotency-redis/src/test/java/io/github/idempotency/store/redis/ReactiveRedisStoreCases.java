package io.github.idempotency.store.redis;

import java.time.Clock;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.test.ReactiveIdempotencyStoreContract;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The reactive redis store against the non-blocking contract, and what it shares with the
 * blocking store, on the connection factory a subclass names (a single node, a Cluster).
 * The store opens the factory's shared connection itself when it is created, so that no
 * step opens it on a non-blocking thread.
 */
abstract class ReactiveRedisStoreCases extends ReactiveIdempotencyStoreContract {

	/** The factory, opened once for the subclass's tests. */
	protected abstract LettuceConnectionFactory connectionFactory();

	@Override
	protected ReactiveIdempotencyStore createReactiveStore(Clock clock) {
		return new ReactiveRedisIdempotencyStore(connectionFactory(), "idempotency-test", clock);
	}

	@Test
	void aClaimOfOneStoreIsFinishedByTheOther() {
		ReactiveAndBlocking.assertBothServeTheSameKeys(connectionFactory(), this.clock, this.workflow);
	}

	@Test
	void aBatchThatReadsFirstAnswersDuplicatesAndClaimsTheRest() {
		ReactiveAndBlocking.assertReadFirstBatch(connectionFactory(), this.clock, this.workflow);
	}

	@Test
	void scriptsThatTheServerLostAreSentAgain() {
		ReactiveAndBlocking.assertScriptsLoadedAgain(connectionFactory(), this.clock, this.workflow);
	}

	@Test
	void aRecordOfLayout0IsReadAndClaimed() {
		ReactiveAndBlocking.assertLayout0(connectionFactory(), this.clock, this.workflow);
	}

}
