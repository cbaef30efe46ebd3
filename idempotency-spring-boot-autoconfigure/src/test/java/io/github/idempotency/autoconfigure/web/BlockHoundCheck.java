package io.github.idempotency.autoconfigure.web;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * BlockHound for a test class: every blocking call made on a thread Reactor or Netty marks
 * non-blocking (an event loop, a {@code parallel} worker) while a test runs is recorded, with
 * where it was made, and fails the test after it. Recorded rather than thrown, so that a
 * blocking call deep in a pipeline (whose error a server would turn into a 500 or a log line)
 * still fails the test. Installed once per test JVM, for the rest of it.
 */
final class BlockHoundCheck implements BeforeEachCallback, AfterEachCallback {

	private static final List<String> blockingCalls = new CopyOnWriteArrayList<>();

	static {
		BlockHound.install((builder) -> builder
			// a task handed to a bounded pool (a blocking store's scheduler) takes its queue's lock
			.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
			// Netty's buffer allocator takes a lock of its own when it grows
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			// Lettuce's endpoint takes its writers' lock for the moment a command is queued
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "lockWritersExclusive")
			.blockingMethodCallback((method) -> blockingCalls
				.add(method + " on " + Thread.currentThread().getName() + " at " + where())));
	}

	/** Forgets the blocking calls made so far: a test that makes one on purpose. */
	static void forget() {
		blockingCalls.clear();
	}

	private static String where() {
		StringBuilder where = new StringBuilder();
		StackTraceElement[] stack = new Throwable().getStackTrace();
		for (int i = 0; i < Math.min(stack.length, 40); i++) {
			where.append("\n\t").append(stack[i]);
		}
		return where.toString();
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		blockingCalls.clear();
	}

	@Override
	public void afterEach(ExtensionContext context) {
		List<String> calls = List.copyOf(blockingCalls);
		blockingCalls.clear();
		assertThat(calls).as("blocking calls on non-blocking threads").isEmpty();
	}

}
