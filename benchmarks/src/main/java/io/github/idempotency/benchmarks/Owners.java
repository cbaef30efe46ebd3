package io.github.idempotency.benchmarks;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fencing tokens for the hand-written baselines, made the way the engine makes them: a
 * random id per process and a counter.
 */
final class Owners {

	private static final String INSTANCE = UUID.randomUUID().toString();

	private static final AtomicLong COUNTER = new AtomicLong();

	private Owners() {
	}

	static String next() {
		return INSTANCE + "-" + COUNTER.incrementAndGet();
	}

}
