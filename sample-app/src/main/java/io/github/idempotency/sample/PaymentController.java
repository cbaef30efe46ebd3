package io.github.idempotency.sample;

import java.net.URI;
import java.time.Instant;

import io.github.idempotency.Idempotent;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Charges a payment over HTTP once per {@code Idempotency-Key} header: a client that
 * retries after a timeout gets the first answer again (status, {@code Location} and body,
 * marked {@code Idempotent-Replayed: true}) instead of a second charge.
 */
@RestController
public class PaymentController {

	private final PaymentRepository payments;

	public PaymentController(PaymentRepository payments) {
		this.payments = payments;
	}

	@PostMapping("/payments")
	@Transactional
	@Idempotent(workflow = "payment-api")
	public ResponseEntity<Receipt> pay(@RequestBody Order order) {
		Payment payment = this.payments.save(new Payment(order.paymentId(), order.amountCents(), Instant.now()));
		return ResponseEntity.created(URI.create("/payments/" + payment.getId()))
			.body(new Receipt(payment.getId(), payment.getPaymentId(), payment.getAmountCents()));
	}

	/**
	 * A payment to charge.
	 *
	 * @param paymentId the business id of the payment
	 * @param amountCents the amount in cents
	 */
	public record Order(String paymentId, long amountCents) {
	}

	/**
	 * The charged payment.
	 *
	 * @param id the id of the charge
	 * @param paymentId the business id of the payment
	 * @param amountCents the amount in cents
	 */
	public record Receipt(long id, String paymentId, long amountCents) {
	}

}
