package io.github.idempotency.observe;

import java.util.Locale;

/**
 * How one idempotent call ended: the {@code outcome} tag of {@code idempotency.requests}.
 */
public enum Outcome {

	/** The method ran (first delivery or takeover). */
	MISS,

	/** The stored result was returned; the method did not run. */
	HIT,

	/** The key ran elsewhere and the call gave up with {@code IdempotencyInProgressException}. */
	CONFLICT,

	/** The key was reused with another payload. */
	MISMATCH,

	/** A stored permanent failure was replayed. */
	FAILED,

	/** The key was missing, blank or too long, or the key or payload expression failed on the arguments. */
	INVALID_KEY,

	/** The store could not be reached or answered something unusable. */
	STORE_ERROR;

	private final String tag = name().toLowerCase(Locale.ROOT);

	/**
	 * The metric tag value.
	 * @return the lower-case name
	 */
	public String tag() {
		return this.tag;
	}

}
