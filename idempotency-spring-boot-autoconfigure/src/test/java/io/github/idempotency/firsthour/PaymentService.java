package io.github.idempotency.firsthour;

import java.util.concurrent.atomic.AtomicInteger;

import io.github.idempotency.Idempotent;
import io.github.idempotency.firsthour.FirstHourApplication.CardDeclinedException;
import io.github.idempotency.firsthour.FirstHourApplication.PaymentRequest;
import io.github.idempotency.firsthour.FirstHourApplication.Receipt;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * README's quick start service, as written.
 */
@Service
class PaymentService {

	@Transactional
	@Idempotent(key = "#request.id", workflow = "payment", payload = "#request",
			recordFailureFor = CardDeclinedException.class)
	public Receipt charge(PaymentRequest request) {
		if (request.amount() < 0) {
			throw new CardDeclinedException("declined: " + request.amount());
		}
		return new Receipt(request.id(), request.amount(), this.charges.incrementAndGet());
	}

	// not in README: what the test counts
	private final AtomicInteger charges = new AtomicInteger();

	public int charges() {
		return this.charges.get();
	}

}
