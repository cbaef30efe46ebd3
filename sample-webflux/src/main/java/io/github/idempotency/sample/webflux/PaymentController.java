package io.github.idempotency.sample.webflux;

import java.net.URI;

import reactor.core.publisher.Mono;

import io.github.idempotency.Idempotent;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Charges a payment over HTTP once per {@code Idempotency-Key} header: a client that
 * retries gets the first answer again (status, {@code Location} and body, marked
 * {@code Idempotent-Replayed: true}) instead of a second charge.
 * <p>
 * The handler's record is what the client received, written once the response is complete,
 * after {@link PaymentService#charge}'s transaction has committed: it is not part of that
 * transaction. The charge's own record ({@code @Idempotent(key = "#paymentId")}) is, so a
 * crash between the commit and the handler's record still charges once: the retry finds
 * the charge's record and gets its receipt. (A handler method that is itself
 * {@code @Transactional} would have its own record written in its transaction, committed
 * with the charge, and its answer sent after the commit: see docs/http.md.)
 */
@RestController
public class PaymentController {

	private final PaymentService payments;

	/**
	 * @param payments the charges
	 */
	public PaymentController(PaymentService payments) {
		this.payments = payments;
	}

	/**
	 * Charges a payment.
	 * @param order the payment to charge
	 * @return 201 with the receipt
	 */
	@PostMapping("/payments")
	@Idempotent(workflow = "payment-api")
	public Mono<ResponseEntity<Receipt>> pay(@RequestBody Mono<Order> order) {
		return order.flatMap((o) -> this.payments.charge(o.paymentId(), o.amountCents()))
			.map((receipt) -> ResponseEntity.created(URI.create("/payments/" + receipt.id())).body(receipt));
	}

	/**
	 * How many times a payment was charged: 0 or 1.
	 * @param paymentId the business id of the payment
	 * @return the number of its rows
	 */
	@GetMapping("/payments/{paymentId}/count")
	public Mono<Long> count(@PathVariable String paymentId) {
		return this.payments.count(paymentId);
	}

	/**
	 * A refused charge: 400.
	 * @param ex the refusal
	 * @return its message
	 */
	@ExceptionHandler(IllegalArgumentException.class)
	public ResponseEntity<String> refused(IllegalArgumentException ex) {
		return ResponseEntity.status(HttpStatus.BAD_REQUEST).body(String.valueOf(ex.getMessage()));
	}

}
