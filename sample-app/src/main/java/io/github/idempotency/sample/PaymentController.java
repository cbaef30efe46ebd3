package io.github.idempotency.sample;

import java.net.URI;
import java.security.Principal;
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
	 * The secured variant: the same charge for an authenticated customer. Keys are scoped by
	 * the principal without any configuration, so two customers sending the same
	 * {@code Idempotency-Key} each get their own charge and receipt.
	 * @param order the payment to charge
	 * @param customer the authenticated customer
	 * @return the receipt
	 */
	@PostMapping("/my/payments")
	@Transactional
	@Idempotent(workflow = "my-payment-api")
	public ResponseEntity<CustomerReceipt> payMine(@RequestBody Order order, Principal customer) {
		Payment payment = this.payments.save(new Payment(order.paymentId(), order.amountCents(), Instant.now()));
		return ResponseEntity.created(URI.create("/payments/" + payment.getId()))
			.body(new CustomerReceipt(customer.getName(), payment.getId(), payment.getPaymentId(),
					payment.getAmountCents()));
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

	/**
	 * The charged payment of a customer.
	 *
	 * @param customer the authenticated customer
	 * @param id the id of the charge
	 * @param paymentId the business id of the payment
	 * @param amountCents the amount in cents
	 */
	public record CustomerReceipt(String customer, long id, String paymentId, long amountCents) {
	}

}
