package io.github.idempotency;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * How a framework reports the failure of one item of a batch, such as Spring Kafka's
 * {@code BatchListenerFailedException}: the engine recognizes it through this interface
 * and stays free of the framework. Positions are indexes: into the list the method
 * received (the items it had to run) or into the original batch. A framework's adapter
 * implements it (the starter's Kafka adapter does); applications do not.
 */
public interface BatchFailures {

	/** Knows no failure of one item: every exception fails the whole batch. */
	BatchFailures NONE = new BatchFailures() {
	};

	/**
	 * The item whose failure {@code failure} reports.
	 * @param failure what the batch method threw
	 * @param received the list the method received
	 * @return the item's index in {@code received}, or -1 when {@code failure} is not a
	 * failure of one item
	 */
	default int failedIndex(Throwable failure, List<?> received) {
		return -1;
	}

	/**
	 * The failure of the item itself, judged against {@code recordFailureFor}.
	 * @param failure a failure {@link #failedIndex} recognized
	 * @return its cause, or {@code failure} itself
	 */
	default Throwable cause(Throwable failure) {
		return failure;
	}

	/**
	 * The failure as it concerns the item's position in the original batch.
	 * @param failure a failure {@link #failedIndex} recognized
	 * @param originalIndex the item's index in {@code original}
	 * @param original the batch the method was called with
	 * @return the exception to throw
	 */
	default Throwable translate(Throwable failure, int originalIndex, List<?> original) {
		return failure;
	}

	/**
	 * An exception that fails the batch at one item that cannot be run (its key is invalid
	 * or was used with another payload), so that the items before it count as done and the
	 * framework handles that item as it handles a failed one (typically, a dead letter).
	 * @param originalIndex the item's index in {@code original}
	 * @param original the batch the method was called with
	 * @param cause why the item cannot run
	 * @return the exception, or {@code null} when the framework has no such mechanism: the
	 * item is then skipped with a WARN
	 */
	default @Nullable Throwable failAt(int originalIndex, List<?> original, IdempotencyException cause) {
		return null;
	}

}
