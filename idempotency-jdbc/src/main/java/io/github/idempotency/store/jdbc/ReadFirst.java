package io.github.idempotency.store.jdbc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether a claim outside a transaction reads the record with a plain primary-key
 * {@code SELECT} before its claim statement: a duplicate is then answered by that read
 * alone (the cheapest statement there is), and a first delivery pays one round trip more.
 * A claim that does not read first inserts first: a first delivery is that insert alone,
 * and a claim that finds a record pays one round trip more, its read (on MariaDB one
 * statement answers both).
 * <p>
 * {@link #ADAPTIVE} decides per workflow from the share of claims that found a record they
 * answered without writing (a duplicate, a failure, a mismatch, a live claim), as a moving
 * average over about the last 32 claims of that workflow: the read comes first while that
 * share is at least {@value Ratios#THRESHOLD_PERCENT} %. Either order costs the other kind
 * of claim one primary-key statement more, so the order that suits most of the claims
 * wins. A claim in the caller's transaction never reads first.
 */
public enum ReadFirst {

	/** Never: every claim inserts first, and reads the record when it exists. */
	NEVER,

	/** Per workflow, while most of its recent claims were answered from an existing record. */
	ADAPTIVE,

	/** Always: every claim outside a transaction reads first. */
	ALWAYS;

	/**
	 * The moving share of answered claims per workflow, in 1/65536ths, with a weight of
	 * 1/32 for each new claim.
	 */
	static final class Ratios {

		static final int THRESHOLD_PERCENT = 50;

		private static final int ONE = 1 << 16;

		private static final int THRESHOLD = ONE * THRESHOLD_PERCENT / 100;

		private final Map<String, AtomicInteger> ratios = new ConcurrentHashMap<>();

		boolean readsFirst(ReadFirst mode, String workflow) {
			if (mode != ADAPTIVE) {
				return mode == ALWAYS;
			}
			AtomicInteger ratio = this.ratios.get(workflow);
			return ratio != null && ratio.get() >= THRESHOLD;
		}

		void record(ReadFirst mode, String workflow, boolean answered) {
			if (mode != ADAPTIVE) {
				return;
			}
			int target = answered ? ONE : 0;
			this.ratios.computeIfAbsent(workflow, (w) -> new AtomicInteger())
				.updateAndGet((ratio) -> ratio + (target - ratio) / 32);
		}

	}

}
