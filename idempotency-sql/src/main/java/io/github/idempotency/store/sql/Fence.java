package io.github.idempotency.store.sql;

/**
 * Which rows a claim's step may change: a claim held by its lease only while its record
 * is still {@code IN_PROGRESS}; a claim held by the caller's transaction its row whatever
 * its status (no other run can change it before the transaction ends).
 */
public enum Fence {

	LEASE(" AND status = 'IN_PROGRESS'"), TRANSACTION("");

	private final String condition;

	Fence(String condition) {
		this.condition = condition;
	}

	/** The condition a step's row meets besides its id and owner, starting with {@code AND}, or empty. */
	public String condition() {
		return this.condition;
	}

}
