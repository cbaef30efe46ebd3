package io.github.idempotency.benchmarks;

import io.github.idempotency.Idempotent;

/**
 * The business method under test: it does nothing but build its result, so what a
 * benchmark measures is the idempotency around it.
 */
public class PaymentHandler {

	/** The workflow of {@link #charge(String)}. */
	public static final String WORKFLOW = "bench-charge";

	/** The workflow of the operation that runs inside the caller's transaction. */
	public static final String WORKFLOW_IN_TRANSACTION = "bench-charge-tx";

	/**
	 * A consumer method as users write it.
	 * @param key the idempotency key
	 * @return the receipt
	 */
	@Idempotent(key = "#key", workflow = WORKFLOW, retention = "2m")
	public Receipt charge(String key) {
		return Receipt.of(key);
	}

}
