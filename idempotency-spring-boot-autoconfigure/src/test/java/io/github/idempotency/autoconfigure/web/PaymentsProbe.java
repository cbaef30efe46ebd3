package io.github.idempotency.autoconfigure.web;

/**
 * What the HTTP tests read of a test application's controller, whatever its stack: how
 * often each account's handler ran, and a latch that holds the {@code /slow} handler.
 */
public interface PaymentsProbe {

	/** Makes the next {@code /slow} call wait for {@link #release()}. */
	void hold();

	/**
	 * Waits until the held handler runs.
	 * @return whether it ran in time
	 * @throws InterruptedException when interrupted
	 */
	boolean awaitEntered() throws InterruptedException;

	/** Lets the held handler finish. */
	void release();

	/**
	 * How often the handler ran for an account.
	 * @param account the account
	 * @return the number of runs
	 */
	int executions(String account);

}
