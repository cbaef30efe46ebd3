package io.github.idempotency.benchmarks;

import io.github.idempotency.Idempotent;
import org.springframework.transaction.annotation.Transactional;

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

	/**
	 * A consumer method whose business writes share a transaction with the idempotency
	 * record (here there are none): a {@code void} result, so the record is inserted
	 * already finished.
	 * @param key the idempotency key
	 */
	@Transactional
	@Idempotent(key = "#key", workflow = WORKFLOW_IN_TRANSACTION, retention = "2m")
	public void chargeInTransaction(String key) {
	}

}
