package io.github.idempotency.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyStoreException;

/**
 * The log of a broker listener whose deliveries are held back because their claims fail:
 * the store cannot be reached (fail-closed, {@link IdempotencyStoreException}) or the key
 * is still in progress after the wait ({@link IdempotencyInProgressException}). One WARN
 * when the holding back begins, then at most one line per back-off interval with the
 * count of deliveries held back since the last line, and one INFO when claims succeed
 * again: an outage costs a few lines, not one (with its stack trace) per delivery.
 * <p>
 * The broker glue decides how long a delivery is held back (a pause before a RabbitMQ
 * requeue, the Kafka error handler's back-off); this class only counts and logs.
 */
public final class HeldBackDeliveries {

	private static final Log logger = LogFactory.getLog(HeldBackDeliveries.class);

	private final String listener;

	private final String settings;

	private final LongSupplier nanoTime;

	private long began;

	private long lastLine;

	private long sinceLastLine;

	private long total;

	private boolean holding;

	/**
	 * @param listener what is held back, for the log lines (a container, a consumer)
	 * @param settings how it is held back, for the first line (the back-off and its
	 * properties)
	 */
	public HeldBackDeliveries(String listener, String settings) {
		this(listener, settings, System::nanoTime);
	}

	HeldBackDeliveries(String listener, String settings, LongSupplier nanoTime) {
		this.listener = listener;
		this.settings = settings;
		this.nanoTime = nanoTime;
	}

	/**
	 * The failure a delivery is held back for: the first {@link IdempotencyStoreException}
	 * or {@link IdempotencyInProgressException} in the cause chain of what the listener
	 * threw, unless an {@link IdempotencyException} not retryable comes first.
	 * @param failure what the listener threw, possibly wrapped by the container
	 * @return the claim's failure, or {@code null} when the delivery is not held back
	 */
	public static @Nullable IdempotencyException cause(@Nullable Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof IdempotencyStoreException || current instanceof IdempotencyInProgressException) {
				return (IdempotencyException) current;
			}
			if (current instanceof IdempotencyException || current.getCause() == current) {
				return null;
			}
		}
		return null;
	}

	/**
	 * A delivery is held back for {@code interval}.
	 * @param cause why (see {@link #cause(Throwable)})
	 * @param interval how long it is held back
	 */
	public void heldBack(IdempotencyException cause, Duration interval) {
		String line = null;
		synchronized (this) {
			long now = this.nanoTime.getAsLong();
			this.total++;
			this.sinceLastLine++;
			if (!this.holding) {
				this.holding = true;
				this.began = now;
				this.lastLine = now;
				this.sinceLastLine = 0;
				line = this.listener + ": a delivery failed because " + why(cause) + " ("
						+ cause.getClass().getSimpleName() + ": " + cause.getMessage() + "); its redeliveries are held back ("
						+ this.settings + ") until claims succeed again, with a line at most every interval";
			}
			else if (now - this.lastLine >= interval.toNanos()) {
				line = this.listener + ": " + this.sinceLastLine + " deliveries held back in the last "
						+ seconds(now - this.lastLine) + " (" + this.total + " in " + seconds(now - this.began)
						+ "), next pause " + interval.toMillis() + " ms: " + why(cause);
				this.lastLine = now;
				this.sinceLastLine = 0;
			}
		}
		if (line != null) {
			logger.warn(line);
		}
	}

	/**
	 * A claim succeeded: logs once that claims succeed again, if deliveries were held back.
	 */
	public void succeeded() {
		String line;
		synchronized (this) {
			if (!this.holding) {
				return;
			}
			long now = this.nanoTime.getAsLong();
			line = this.listener + ": claims succeed again; " + this.total + " deliveries were held back in "
					+ seconds(now - this.began);
			this.holding = false;
			this.total = 0;
			this.sinceLastLine = 0;
		}
		logger.info(line);
	}

	/**
	 * Whether deliveries are being held back (since the last success).
	 * @return {@code true} between a held-back delivery and the next success
	 */
	public synchronized boolean isHolding() {
		return this.holding;
	}

	private static String why(IdempotencyException cause) {
		return (cause instanceof IdempotencyInProgressException) ? "the idempotency key is still in progress elsewhere"
				: "the idempotency store could not claim the key";
	}

	private static String seconds(long nanos) {
		return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
	}

}
