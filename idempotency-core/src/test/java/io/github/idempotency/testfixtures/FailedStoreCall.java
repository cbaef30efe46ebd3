package io.github.idempotency.testfixtures;

import java.util.concurrent.CountDownLatch;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.StoreOperation;

/**
 * An engine observer a test waits on until a store call of one kind has failed, so that it
 * can end an outage or a lock wait at that point and no sooner.
 */
public final class FailedStoreCall implements IdempotencyObserver {

	private final StoreOperation operation;

	private final CountDownLatch failed = new CountDownLatch(1);

	/**
	 * @param operation the kind of call waited for
	 */
	public FailedStoreCall(StoreOperation operation) {
		this.operation = operation;
	}

	@Override
	public void onStoreCall(StoreOperation operation, long nanos, boolean success) {
		if (operation == this.operation && !success) {
			this.failed.countDown();
		}
	}

	/**
	 * Waits until a call of the kind has failed.
	 * @throws InterruptedException when interrupted first
	 */
	public void await() throws InterruptedException {
		this.failed.await();
	}

	/**
	 * Whether a call of the kind has failed.
	 * @return {@code true} once one did
	 */
	public boolean happened() {
		return this.failed.getCount() == 0;
	}

}
