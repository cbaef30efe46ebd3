package io.github.idempotency.store;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The answer of {@link IdempotencyStore#claim(ClaimRequest)}: the outcome and the record it
 * is about, read in the same atomic step, and for an acquired claim the handle that
 * finishes it.
 *
 * @param outcome what the claim found
 * @param record for {@link ClaimOutcome#ACQUIRED} the record as now stored (its attempt
 * and recovery point tell a takeover from a first run); otherwise the record found —
 * for {@link ClaimOutcome#DUPLICATE}, {@link ClaimOutcome#FAILED} and
 * {@link ClaimOutcome#MISMATCH} at least its id, status and what the engine acts on
 * (the response; the error type and message; the fingerprint), a store that answers only
 * those filling the other fields as it documents
 * @param handle the acquired claim, {@code null} for every other outcome
 */
public record ClaimResult(ClaimOutcome outcome, IdempotencyRecord record, @Nullable ClaimHandle handle) {

	public ClaimResult {
		Assert.notNull(outcome, "'outcome' must not be null");
		Assert.notNull(record, "'record' must not be null");
		Assert.isTrue((outcome == ClaimOutcome.ACQUIRED) == (handle != null),
				"An acquired claim, and only an acquired claim, has a handle");
	}

	/**
	 * An acquired claim.
	 * @param record the record as now stored
	 * @param handle finishes the claim
	 * @return the result
	 */
	public static ClaimResult acquired(IdempotencyRecord record, ClaimHandle handle) {
		return new ClaimResult(ClaimOutcome.ACQUIRED, record, handle);
	}

	/**
	 * A claim that found a record it could not take.
	 * @param outcome anything but {@link ClaimOutcome#ACQUIRED}
	 * @param record the record found
	 * @return the result
	 */
	public static ClaimResult of(ClaimOutcome outcome, IdempotencyRecord record) {
		return new ClaimResult(outcome, record, null);
	}

	/**
	 * The handle of an acquired claim.
	 * @return the handle
	 * @throws IllegalStateException when the claim was not acquired
	 */
	public ClaimHandle acquiredHandle() {
		Assert.state(this.handle != null, () -> "The claim was not acquired: " + this.outcome);
		return this.handle;
	}

	/**
	 * Whether this claim took over an expired lease of an earlier run.
	 * @return {@code true} for an acquired claim with attempt 2 or more
	 */
	public boolean isTakeover() {
		return this.outcome == ClaimOutcome.ACQUIRED && this.record.attempt() > 1;
	}

}
