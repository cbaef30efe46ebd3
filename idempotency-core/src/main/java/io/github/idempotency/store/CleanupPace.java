package io.github.idempotency.store;

import org.springframework.util.Assert;

/**
 * How fast a SQL store's cleanup deletes expired records (the jdbc store's
 * {@code deleteExpired(CleanupPace)}, the r2dbc store's): batches of at
 * most {@code batchSize} rows, and after each batch a pause, so that the cleanup works at
 * most {@code dutyCycle} of the time (a batch that took {@code t} is followed by a pause of
 * {@code t × (1 − dutyCycle) / dutyCycle}: the busier the database, the longer the batch
 * and the pause) and deletes at most {@code maxRowsPerSecond} rows a second (none: 0).
 * @param batchSize the most rows one statement deletes; positive
 * @param dutyCycle the share of the time the cleanup works, in (0, 1]; 1 never pauses
 * @param maxRowsPerSecond the most rows deleted per second; 0 for no limit
 */
public record CleanupPace(int batchSize, double dutyCycle, int maxRowsPerSecond) {

	/**
	 * Checks the values.
	 * @param batchSize the most rows one statement deletes; positive
	 * @param dutyCycle the share of the time the cleanup works, in (0, 1]
	 * @param maxRowsPerSecond the most rows deleted per second; 0 for no limit
	 */
	public CleanupPace {
		Assert.isTrue(batchSize > 0, () -> "The cleanup's batch size must be positive, not " + batchSize);
		Assert.isTrue(dutyCycle > 0 && dutyCycle <= 1,
				() -> "The cleanup's duty cycle must be more than 0 and at most 1, not " + dutyCycle);
		Assert.isTrue(maxRowsPerSecond >= 0,
				() -> "The cleanup's rows per second must not be negative, not " + maxRowsPerSecond);
	}

	/**
	 * Batches one after the other, without a pause.
	 * @param batchSize the most rows one statement deletes; positive
	 * @return the pace
	 */
	public static CleanupPace unpaced(int batchSize) {
		return new CleanupPace(batchSize, 1, 0);
	}

	/**
	 * The pause after a batch.
	 * @param rows how many rows the batch deleted
	 * @param nanos how long it took
	 * @return the pause in nanoseconds, 0 for none
	 */
	public long pauseAfter(long rows, long nanos) {
		double pause = nanos * (1 - this.dutyCycle) / this.dutyCycle;
		if (this.maxRowsPerSecond > 0) {
			pause = Math.max(pause, rows * 1e9 / this.maxRowsPerSecond - nanos);
		}
		return (long) Math.max(0, pause);
	}

}
