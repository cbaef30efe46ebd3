package io.github.idempotency.store;

import org.jspecify.annotations.Nullable;

/**
 * An acquired claim: the one way to finish or extend it. A store returns one with every
 * {@link ClaimOutcome#ACQUIRED} claim; it knows the record, the owner (fencing token), the
 * lease and the retention of that claim.
 * <p>
 * For a claim held by its lease, every step is fenced: it succeeds only while the record
 * is still {@code IN_PROGRESS} and owned by this claim, and returns {@code false}
 * otherwise (another run took the key over after the lease ran out). A store whose claim
 * is part of the caller's transaction implements the same steps on that transaction (see
 * the jdbc store). Failures to reach the server are unchecked exceptions.
 */
public interface ClaimHandle {

	/**
	 * Marks the record {@code COMPLETED} with its response, kept for the retention (a store
	 * may keep it until the retention past its lease's end instead, when that is later).
	 * <p>
	 * Outside a transaction the engine calls it again when it throws (the operation ran),
	 * for up to the lease, also after an attempt that did complete the record and only lost
	 * its answer: that call answers {@code false} like any step on a record that is no
	 * longer {@code IN_PROGRESS}, and the engine then reads the record ({@code find}) to
	 * tell it from a takeover by the owner, which a completed record keeps.
	 * @param response the serialized result, {@code null} for {@code void}
	 * @return {@code false} when the claim is no longer this run's
	 */
	boolean complete(@Nullable String response);

	/**
	 * Marks the record {@code FAILED} with the failure's class name and message, kept for
	 * the retention as {@link #complete}, so that later deliveries replay the failure.
	 * <p>
	 * The engine calls it again when it throws, as {@link #complete}: a failed record
	 * keeps its owner too.
	 * @param failure what the operation threw
	 * @return {@code false} when the claim is no longer this run's
	 */
	boolean fail(Throwable failure);

	/**
	 * Gives the key up after a failure that the next delivery may retry: the record is
	 * removed. A claim that is part of a transaction which commits all the same (the
	 * failure's writes commit with it) records the failure instead, as {@link #fail}.
	 * @param failure what the operation threw
	 * @return {@code false} when the claim is no longer this run's
	 */
	boolean release(Throwable failure);

	/**
	 * Gives the key up for an operation that never ran (its batch stopped before it, or
	 * gave its claims back to wait for keys that run elsewhere): the record is removed,
	 * also where the claim is part of a transaction that commits. The default releases it
	 * ({@link #release}), which is the same for a claim held by its lease.
	 * @return {@code false} when the claim is no longer this run's
	 */
	default boolean abandon() {
		return release(new java.util.concurrent.CancellationException("The operation never ran"));
	}

	/**
	 * Whether this claim is part of the caller's current transaction: its steps commit or
	 * roll back with it (the jdbc store on the transaction's {@code DataSource}). The engine
	 * stores how the run of any other claim ended once that transaction has ended, so that
	 * a record never says "done" for writes that rolled back.
	 * @return {@code true} for a claim in the caller's transaction; the default is
	 * {@code false}
	 */
	default boolean joinsTransaction() {
		return false;
	}

	/**
	 * Extends the lease to now + the claim's lease, and keeps the record at least until the
	 * new lease's end + the claim's retention, as the claim did. Never only to the lease's
	 * end: a run that crashes after running longer than its retention must leave its
	 * attempt count and recovery point to the run that takes it over once the lease has
	 * run out, which would otherwise find no record, start again at attempt 1 and redo the
	 * recovery point's work. A store whose records also carry a time to live of their own
	 * (Redis's {@code PEXPIRE}) sets it to match. An expiry already later stays.
	 * @return {@code false} when the claim is no longer this run's
	 */
	boolean renew();

	/**
	 * Durably stores a recovery point on the record and renews the lease, as
	 * {@link #renew()} does: the record is kept at least until the new lease's end + the
	 * claim's retention, so the run that takes over after a crash reads the recovery point.
	 * @param recoveryPoint the application's marker
	 * @return {@code false} when the claim is no longer this run's
	 */
	boolean saveRecoveryPoint(String recoveryPoint);

}
