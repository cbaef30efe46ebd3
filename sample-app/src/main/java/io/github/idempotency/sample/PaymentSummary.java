package io.github.idempotency.sample;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Logs one summary line once every published event was consumed: payments charged (from
 * the database) and duplicates suppressed (from the {@code idempotency.requests} meter,
 * {@code outcome=hit}).
 */
@Component
public class PaymentSummary implements DisposableBean {

	private static final Log logger = LogFactory.getLog(PaymentSummary.class);

	private final PaymentRepository payments;

	private final MeterRegistry meters;

	private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "payment-summary");
		thread.setDaemon(true);
		return thread;
	});

	private final CompletableFuture<Result> result = new CompletableFuture<>();

	public PaymentSummary(PaymentRepository payments, MeterRegistry meters) {
		this.payments = payments;
		this.meters = meters;
	}

	void expect(int published, int duplicates) {
		this.poller.scheduleWithFixedDelay(() -> check(published, duplicates), 100, 200, TimeUnit.MILLISECONDS);
	}

	private void check(int published, int duplicates) {
		long charged = this.payments.count();
		long suppressed = (long) suppressed();
		if (charged + suppressed >= published && !this.result.isDone()) {
			Result summary = new Result(published, duplicates, charged, suppressed);
			logger.info(summary);
			this.result.complete(summary);
			this.poller.shutdown();
		}
	}

	private double suppressed() {
		Counter hits = this.meters.find("idempotency.requests")
			.tags("workflow", "payment", "outcome", "hit")
			.counter();
		return (hits != null) ? hits.count() : 0;
	}

	/**
	 * The summary, once all events were consumed.
	 * @return the summary's future
	 */
	public CompletableFuture<Result> result() {
		return this.result;
	}

	@Override
	public void destroy() {
		this.poller.shutdownNow();
	}

	/**
	 * What happened to the burst.
	 *
	 * @param published events published
	 * @param duplicates of which duplicates
	 * @param charged payments charged (rows in the database)
	 * @param suppressed duplicates whose charge was not run again
	 */
	public record Result(int published, int duplicates, long charged, long suppressed) {

		@Override
		public String toString() {
			return "published " + this.published + " events (" + this.duplicates + " duplicates): " + this.charged
					+ " payments charged, " + this.suppressed + " duplicates suppressed";
		}

	}

}
