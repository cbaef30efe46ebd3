package io.github.idempotency.store.jdbc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether a claim outside a transaction reads the record with a plain primary-key
 * {@code SELECT} before its claim statement: a duplicate is then answered by that read
 * alone (the cheapest statement there is), and a first delivery pays one round trip more
 * (its insert: no row was there a moment ago).
 * <p>
 * {@link #ADAPTIVE} decides per workflow from the share of claims that found a record they
 * answered without writing (a duplicate, a failure, a mismatch, a live claim), as a moving
 * average over about the last 32 claims of that workflow: the read comes first while that
 * share is at least {@value Ratios#READ_FIRST_PERCENT} %, where the round trip it adds to a
 * first delivery costs less than the claim statement's write path saves on a duplicate.
 * Below {@value Ratios#INSERT_FIRST_PERCENT} % a claim on PostgreSQL is a plain insert, the
 * record read only when it exists: the server saves more on the first deliveries than the
 * read costs the few duplicates. Between the two it is one statement whatever it finds
 * (docs/benchmarks.md). A claim in the caller's transaction never reads first, but inserts
 * first as one outside it does, and counts towards the share.
 */
public enum ReadFirst {

	/** Never: every claim is its claim statement (one statement on PostgreSQL whatever it finds). */
	NEVER,

	/** Per workflow, while most of its recent claims were answered from an existing record. */
	ADAPTIVE,

	/** Always: every claim outside a transaction reads first, and inserts when it found no record. */
	ALWAYS;

	/**
	 * The moving share of answered claims per workflow, in 1/65536ths, with a weight of
	 * 1/32 for each new claim.
	 */
	static final class Ratios {

		static final int READ_FIRST_PERCENT = 70;

		static final int INSERT_FIRST_PERCENT = 25;

		private static final int ONE = 1 << 16;

		private static final int READ_FIRST = ONE * READ_FIRST_PERCENT / 100;

		private static final int INSERT_FIRST = ONE * INSERT_FIRST_PERCENT / 100;

		private final Map<String, AtomicInteger> ratios = new ConcurrentHashMap<>();

		boolean readsFirst(ReadFirst mode, String workflow) {
			if (mode != ADAPTIVE) {
				return mode == ALWAYS;
			}
			AtomicInteger ratio = this.ratios.get(workflow);
			return ratio != null && ratio.get() >= READ_FIRST;
		}

		boolean insertsFirst(ReadFirst mode, String workflow) {
			if (mode != ADAPTIVE) {
				return false;
			}
			AtomicInteger ratio = this.ratios.get(workflow);
			return ratio == null || ratio.get() < INSERT_FIRST;
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
