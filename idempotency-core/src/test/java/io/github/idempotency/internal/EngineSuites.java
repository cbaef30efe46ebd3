package io.github.idempotency.internal;

import java.time.Clock;

import org.junit.jupiter.api.Nested;

import io.github.idempotency.store.IdempotencyStore;

/**
 * Every suite of the engine on one store: a store module runs them all on its server by
 * naming the store in a subclass ({@code PostgresJdbcEngineTest}, {@code RedisEngineTest},
 * ...). A new suite is one more nested class here.
 */
public abstract class EngineSuites {

	/**
	 * The store under test, new for each test, reading time from {@code clock}.
	 * @param clock the store's clock
	 * @return the store
	 */
	protected abstract IdempotencyStore store(Clock clock);

	@Nested
	class Protocol extends ProtocolBehaviourSuite {

		@Override
		protected IdempotencyStore store(Clock clock) {
			return EngineSuites.this.store(clock);
		}

	}

	/** The same cases with the asynchronous shapes on the engine's non-blocking path. */
	@Nested
	class NonBlockingProtocol extends ProtocolBehaviourSuite {

		@Override
		protected IdempotencyStore store(Clock clock) {
			return EngineSuites.this.store(clock);
		}

		@Override
		protected boolean nonBlocking() {
			return true;
		}

	}

	@Nested
	class BatchesHoldingEachOthersKeys extends BatchesHoldingEachOthersKeysSuite {

		@Override
		protected IdempotencyStore store() {
			return EngineSuites.this.store(Clock.systemUTC());
		}

	}

}
