package io.github.idempotency.store;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The answer of {@link ReactiveIdempotencyStore#claim(ClaimRequest)}, as {@link ClaimResult}
 * is the blocking store's: the outcome, the record it is about, and for an acquired claim its
 * handle.
 *
 * @param outcome what the claim found
 * @param record the record, as {@link ClaimResult#record()} says
 * @param handle the acquired claim, {@code null} for every other outcome
 */
public record ReactiveClaimResult(ClaimOutcome outcome, IdempotencyRecord record,
		@Nullable ReactiveClaimHandle handle) {

	public ReactiveClaimResult {
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
	public static ReactiveClaimResult acquired(IdempotencyRecord record, ReactiveClaimHandle handle) {
		return new ReactiveClaimResult(ClaimOutcome.ACQUIRED, record, handle);
	}

	/**
	 * A claim that found a record it could not take.
	 * @param outcome anything but {@link ClaimOutcome#ACQUIRED}
	 * @param record the record found
	 * @return the result
	 */
	public static ReactiveClaimResult of(ClaimOutcome outcome, IdempotencyRecord record) {
		return new ReactiveClaimResult(outcome, record, null);
	}

	/**
	 * The handle of an acquired claim.
	 * @return the handle
	 * @throws IllegalStateException when the claim was not acquired
	 */
	public ReactiveClaimHandle acquiredHandle() {
		Assert.state(this.handle != null, () -> "The claim was not acquired: " + this.outcome);
		return this.handle;
	}

}
