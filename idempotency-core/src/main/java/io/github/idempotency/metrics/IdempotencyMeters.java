package io.github.idempotency.metrics;

/**
 * The names of every meter the starter registers, and of their tags. The idempotency key
 * is never a tag (it is unbounded); the workflow is.
 */
public final class IdempotencyMeters {

	/** Counter of calls by how they ended; tags {@code workflow}, {@code backend}, {@code outcome}. */
	public static final String REQUESTS = "idempotency.requests";

	/** Counter of claims that found the key running elsewhere; tags {@code workflow}, {@code backend}. */
	public static final String CONFLICTS = "idempotency.conflicts";

	/** Counter of takeovers of expired leases; tags {@code workflow}, {@code backend}. */
	public static final String TAKEOVERS = "idempotency.takeovers";

	/** Counter of runs whose claim was taken over; tags {@code workflow}, {@code backend}. */
	public static final String LEASE_LOST = "idempotency.lease.lost";

	/** Timer of store steps; tags {@code backend}, {@code operation}, {@code result}. */
	public static final String STORE = "idempotency.store";

	/** Timer of the store cleanup's runs, pauses included; tag {@code backend}. */
	public static final String CLEANUP = "idempotency.cleanup";

	/** Counter of expired records the store cleanup removed; tag {@code backend}. */
	public static final String CLEANUP_REMOVED = "idempotency.cleanup.removed";

	public static final String TAG_WORKFLOW = "workflow";

	public static final String TAG_BACKEND = "backend";

	public static final String TAG_OUTCOME = "outcome";

	public static final String TAG_OPERATION = "operation";

	public static final String TAG_RESULT = "result";

	private IdempotencyMeters() {
	}

}
