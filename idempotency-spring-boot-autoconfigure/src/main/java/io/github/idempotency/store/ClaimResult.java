package io.github.idempotency.store;

import org.springframework.util.Assert;

/**
 * The answer of {@link IdempotencyStore#claim(ClaimRequest)}: the outcome and the record it
 * is about, read in the same atomic step.
 *
 * @param outcome what the claim found
 * @param record for {@link ClaimOutcome#ACQUIRED} the record as now stored (its attempt
 * and recovery point tell a takeover from a first run; {@code COMPLETED} when the claim
 * wrote it already finished, see {@link #isFinished()}); otherwise the record found
 * @param leaseBound {@code false} when the claim is held by something else than its
 * lease (an enclosing database transaction), so it needs no renewal
 */
public record ClaimResult(ClaimOutcome outcome, IdempotencyRecord record, boolean leaseBound) {

	public ClaimResult {
		Assert.notNull(outcome, "'outcome' must not be null");
		Assert.notNull(record, "'record' must not be null");
	}

	public static ClaimResult of(ClaimOutcome outcome, IdempotencyRecord record) {
		return new ClaimResult(outcome, record, true);
	}

	/**
	 * Whether this claim wrote its record already {@code COMPLETED}. A store may do so for
	 * a {@code void} operation ({@link ClaimRequest#resultExpected()} {@code false}) whose
	 * claim is held by an enclosing transaction: the engine then runs the operation and
	 * does not complete the record; if the operation throws, the engine releases or fails
	 * the record as after any claim, and the store must accept that from the claim's owner
	 * until the transaction ends.
	 * @return {@code true} for an acquired claim whose record is already {@code COMPLETED}
	 */
	public boolean isFinished() {
		return this.outcome == ClaimOutcome.ACQUIRED && this.record.status() == RecordStatus.COMPLETED;
	}

	/**
	 * Whether this claim took over an expired lease of an earlier run.
	 * @return {@code true} for an acquired claim with attempt 2 or more
	 */
	public boolean isTakeover() {
		return this.outcome == ClaimOutcome.ACQUIRED && this.record.attempt() > 1;
	}

}
