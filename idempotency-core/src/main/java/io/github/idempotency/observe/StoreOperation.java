package io.github.idempotency.observe;

import java.util.Locale;

/**
 * A store step the engine takes: the {@code operation} tag of the {@code idempotency.store}
 * timer. Saving a recovery point counts as {@code renew} (it renews the lease too).
 */
public enum StoreOperation {

	CLAIM, COMPLETE, FAIL, RELEASE, RENEW;

	private final String tag = name().toLowerCase(Locale.ROOT);

	/**
	 * The metric tag value.
	 * @return the lower-case name
	 */
	public String tag() {
		return this.tag;
	}

}
