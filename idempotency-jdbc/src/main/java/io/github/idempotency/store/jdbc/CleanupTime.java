package io.github.idempotency.store.jdbc;

import java.util.concurrent.TimeUnit;

/**
 * The time the cleanup measures its batches with and pauses between them on: the
 * system's, or a test's.
 */
interface CleanupTime {

	/** The system's monotonic clock and {@link TimeUnit#sleep}. */
	CleanupTime SYSTEM = new CleanupTime() {

		@Override
		public long nanoTime() {
			return System.nanoTime();
		}

		@Override
		public void sleep(long nanos) throws InterruptedException {
			TimeUnit.NANOSECONDS.sleep(nanos);
		}

	};

	/**
	 * A monotonic time.
	 * @return nanoseconds since some fixed origin
	 */
	long nanoTime();

	/**
	 * Pauses the calling thread.
	 * @param nanos how long; positive
	 * @throws InterruptedException when the thread is interrupted (the cleanup stops)
	 */
	void sleep(long nanos) throws InterruptedException;

}
