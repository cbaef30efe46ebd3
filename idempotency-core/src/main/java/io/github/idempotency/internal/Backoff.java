package io.github.idempotency.internal;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The one way the engine waits before trying again, whether it polls a key another run
 * holds or offers an ending to a store that failed: pauses that start at 5 ms and double
 * up to 500 ms, each drawn between half and all of that (so that two batches that conflict
 * on each other's keys do not try again in step), within a budget that starts when the
 * value is made. Not thread-safe: one value per wait.
 */
final class Backoff {

	static final long FIRST = TimeUnit.MILLISECONDS.toNanos(5);

	static final long MAX = TimeUnit.MILLISECONDS.toNanos(500);

	private final EngineTime time;

	private final long deadline;

	private final boolean bounded;

	private long ceiling = FIRST;

	private Backoff(EngineTime time, long deadline, boolean bounded) {
		this.time = time;
		this.deadline = deadline;
		this.bounded = bounded;
	}

	/**
	 * A backoff whose budget is {@code budget} from now.
	 * @param time the engine's time
	 * @param budget how long it may go on
	 * @return the backoff
	 */
	static Backoff within(EngineTime time, Duration budget) {
		return new Backoff(time, time.nanoTime() + budget.toNanos(), true);
	}

	/**
	 * A backoff without a budget: once its pauses reach {@link #MAX}, they stay there.
	 * @param time the engine's time
	 * @return the backoff
	 */
	static Backoff unbounded(EngineTime time) {
		return new Backoff(time, 0, false);
	}

	/**
	 * The pause before the next attempt.
	 * @return the pause in nanoseconds, or -1 once the budget is spent
	 */
	long next() {
		long remaining = this.bounded ? this.deadline - this.time.nanoTime() : Long.MAX_VALUE;
		if (remaining <= 0) {
			return -1;
		}
		long pause = this.ceiling / 2 + ThreadLocalRandom.current().nextLong(this.ceiling / 2 + 1);
		this.ceiling = Math.min(this.ceiling * 2, MAX);
		return Math.min(pause, remaining);
	}

	/**
	 * Waits the next pause on this thread.
	 * @return {@code false} when the budget is spent or the thread was interrupted: do not
	 * try again
	 */
	boolean await() {
		long pause = next();
		if (pause < 0) {
			return false;
		}
		return this.time.sleep(pause);
	}

}
