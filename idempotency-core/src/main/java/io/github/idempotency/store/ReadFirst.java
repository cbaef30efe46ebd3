package io.github.idempotency.store;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether a store reads a record before it writes a claim: a duplicate is then answered by
 * the read alone, and a first delivery pays one round trip more. The one read-first rule of
 * every store that has a choice (the jdbc store per claim, the redis store per batch).
 * <p>
 * {@link #ADAPTIVE} decides per workflow from the share of recent claims that found a
 * record they answered without writing (a duplicate, a failure, a mismatch, a live claim),
 * a moving average over about the last 32 claims of that workflow ({@link Choices}): the
 * read comes first while that share is at least {@value Choices#READ_FIRST_PERCENT} %; below
 * {@value Choices#INSERT_FIRST_PERCENT} % a store that can should write first and read only
 * what it met.
 */
public enum ReadFirst {

	/** Never: every claim is its claim statement or command. */
	NEVER,

	/** Per workflow, while most of its recent claims were answered from an existing record. */
	ADAPTIVE,

	/** Always: every claim reads first, and writes only when it found no record. */
	ALWAYS;

	/**
	 * The choices of one store: the moving share of answered claims per workflow, in
	 * 1/65536ths, with a weight of 1/32 for each new claim. Thread-safe.
	 */
	public static final class Choices {

		/** The share of answered claims from which a claim reads first. */
		public static final int READ_FIRST_PERCENT = 70;

		/** The share of answered claims below which a claim writes first. */
		public static final int INSERT_FIRST_PERCENT = 25;

		private static final int ONE = 1 << 16;

		private static final int READ_FIRST = ONE * READ_FIRST_PERCENT / 100;

		private static final int INSERT_FIRST = ONE * INSERT_FIRST_PERCENT / 100;

		private final Map<String, AtomicInteger> ratios = new ConcurrentHashMap<>();

		/**
		 * Whether the next claim of {@code workflow} reads first.
		 * @param mode the store's setting
		 * @param workflow the claim's workflow
		 * @return {@code true} to read first
		 */
		public boolean readsFirst(ReadFirst mode, String workflow) {
			if (mode != ADAPTIVE) {
				return mode == ALWAYS;
			}
			AtomicInteger ratio = this.ratios.get(workflow);
			return ratio != null && ratio.get() >= READ_FIRST;
		}

		/**
		 * Whether the next claim of {@code workflow} is most likely new, so that a plain
		 * write first costs least.
		 * @param mode the store's setting
		 * @param workflow the claim's workflow
		 * @return {@code true} to write first
		 */
		public boolean insertsFirst(ReadFirst mode, String workflow) {
			if (mode != ADAPTIVE) {
				return false;
			}
			AtomicInteger ratio = this.ratios.get(workflow);
			return ratio == null || ratio.get() < INSERT_FIRST;
		}

		/**
		 * Counts a claim's answer.
		 * @param mode the store's setting
		 * @param workflow the claim's workflow
		 * @param answered whether the claim found a record it answered without writing
		 */
		public void record(ReadFirst mode, String workflow, boolean answered) {
			if (mode != ADAPTIVE) {
				return;
			}
			int target = answered ? ONE : 0;
			this.ratios.computeIfAbsent(workflow, (w) -> new AtomicInteger())
				.updateAndGet((ratio) -> ratio + (target - ratio) / 32);
		}

	}

}
