package io.github.idempotency.internal;

import java.time.Clock;

import org.junit.jupiter.api.Nested;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;

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

	/**
	 * The store's own non-blocking side, on the same records as {@link #store(Clock)}, or
	 * {@code null} (the default): the non-blocking suite then runs the blocking store's steps
	 * on a scheduler.
	 * @param clock the store's clock
	 * @return the store, or {@code null}
	 */
	protected @Nullable ReactiveIdempotencyStore reactiveStore(Clock clock) {
		return null;
	}

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

		@Override
		protected @Nullable ReactiveIdempotencyStore reactiveStore(Clock clock) {
			return EngineSuites.this.reactiveStore(clock);
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
