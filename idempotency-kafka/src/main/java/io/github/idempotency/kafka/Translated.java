package io.github.idempotency.kafka;

import java.time.Duration;
import java.util.Arrays;

import org.springframework.kafka.support.Acknowledgment;

/**
 * The {@link Acknowledgment} the method gets: a batch's speaks in the indexes of the
 * list the method received; each remembers where the method asked for its records
 * again ({@code nack}).
 */
final class Translated implements Acknowledgment {

	final Acknowledgment delegate;

	final int[] positions;

	boolean partialToEnd;

	/** The index from which the method asked for its records again, or -1. */
	int nackedAt = -1;

	Translated(Acknowledgment delegate, int[] positions) {
		this.delegate = delegate;
		this.positions = positions;
	}

	@Override
	public void acknowledge() {
		this.delegate.acknowledge();
	}

	@Override
	public void acknowledge(int index) {
		this.delegate.acknowledge(position(index));
		this.partialToEnd = index == this.positions.length - 1;
	}

	@Override
	public void nack(Duration sleep) {
		this.delegate.nack(sleep);
		this.nackedAt = 0;
	}

	@Override
	public void nack(int index, Duration sleep) {
		this.delegate.nack(position(index), sleep);
		this.nackedAt = index;
	}

	@Override
	public boolean isOutOfOrderCommit() {
		return this.delegate.isOutOfOrderCommit();
	}

	private int position(int index) {
		if (index < 0 || index >= this.positions.length) {
			throw new IllegalArgumentException("index (" + index + ") is out of range (0-"
					+ (this.positions.length - 1) + ")");
		}
		return this.positions[index];
	}

	@Override
	public String toString() {
		return "Acknowledgment of records " + Arrays.toString(this.positions) + " of " + this.delegate;
	}

}
