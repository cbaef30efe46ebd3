package io.github.idempotency.internal;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by an adapter's action when the method returned but asked its broker to deliver
 * again (a Kafka listener's {@code nack}, a RabbitMQ {@code basicNack} or
 * {@code basicReject} with requeue) the elements it was called with from {@link #from()}
 * on (0 for a single call). The engine gives those claims back, as it does claims that
 * never ran, instead of completing them, so that the delivery to come runs them; it
 * answers its caller as if the method returned. Never reaches the caller.
 */
public final class RedeliveryRequested extends RuntimeException {

	private final int from;

	private final transient @Nullable Object result;

	/**
	 * @param from the first element (of those the method was called with) delivered again
	 * @param result what the method returned
	 */
	public RedeliveryRequested(int from, @Nullable Object result) {
		super("redelivery requested from element " + from, null, false, false);
		this.from = from;
		this.result = result;
	}

	/**
	 * The first element, of those the method was called with, delivered again.
	 * @return its index, 0 for a single call
	 */
	public int from() {
		return this.from;
	}

	/**
	 * What the method returned.
	 * @return the result
	 */
	public @Nullable Object result() {
		return this.result;
	}

}
