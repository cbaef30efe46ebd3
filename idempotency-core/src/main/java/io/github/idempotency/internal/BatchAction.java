package io.github.idempotency.internal;

import org.jspecify.annotations.Nullable;

/**
 * The body of a batch: runs the items at the given positions of the batch.
 */
@FunctionalInterface
public interface BatchAction {

	/**
	 * Runs the items at {@code positions} (ascending indexes into the batch), storing the
	 * result of the {@code j}-th of them, as soon as it has one, in {@code results[j]}
	 * (left {@code null} for {@code void}).
	 * @param positions the items to run
	 * @param results where the results go
	 * @throws Throwable what the items threw
	 */
	void proceed(int[] positions, @Nullable Object[] results) throws Throwable;

}
