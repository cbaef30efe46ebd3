package io.github.idempotency.sample.webflux;

import java.time.Instant;

import reactor.core.publisher.Mono;

import io.github.idempotency.Idempotent;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Charges a payment once per payment id, in one reactive transaction with its record.
 * <p>
 * {@code @Idempotent} runs inside {@code @Transactional} (its advisor's default order), and
 * a {@code Mono} method on a non-blocking store is claimed when it is subscribed, with the
 * subscriber's Reactor context: here the context of the reactive transaction. So the r2dbc
 * store's claim joins that transaction on the same {@code ConnectionFactory}: the record is
 * written completed with the receipt, and the {@code payment} row and the record commit or
 * roll back together. A charge that fails after its insert leaves neither a row nor a
 * record, and the same payment id may be charged again. This method, not the HTTP handler
 * ({@link PaymentController}), is what makes the charge and its record atomic.
 */
@Service
public class PaymentService {

	private final DatabaseClient database;

	/**
	 * @param database the client of the application's {@code ConnectionFactory}
	 */
	public PaymentService(DatabaseClient database) {
		this.database = database;
	}

	/**
	 * Charges a payment: inserts its row, then refuses an amount that is not positive, which
	 * rolls the insert back. A second charge of a payment id gets the first receipt without
	 * a second row.
	 * @param paymentId the business id of the payment, the key of its record
	 * @param amountCents the amount in cents
	 * @return the receipt
	 */
	@Transactional
	@Idempotent(workflow = "payment-charge", key = "#paymentId")
	public Mono<Receipt> charge(String paymentId, long amountCents) {
		return this.database
			.sql("INSERT INTO payment (payment_id, amount_cents, charged_at) VALUES (:paymentId, :amountCents, :chargedAt)")
			.bind("paymentId", paymentId)
			.bind("amountCents", amountCents)
			.bind("chargedAt", Instant.now().toEpochMilli())
			.filter((statement) -> statement.returnGeneratedValues("id"))
			.map((row) -> row.get("id", Long.class))
			.one()
			// checked after the insert on purpose: the failure rolls the row back with the record
			.flatMap((id) -> (amountCents > 0) ? Mono.just(new Receipt(id, paymentId, amountCents))
					: Mono.error(new IllegalArgumentException("The amount must be positive: " + amountCents)));
	}

	/**
	 * How many rows of a payment id the table holds.
	 * @param paymentId the business id of the payment
	 * @return the number of its rows
	 */
	public Mono<Long> count(String paymentId) {
		return this.database.sql("SELECT COUNT(*) AS n FROM payment WHERE payment_id = :paymentId")
			.bind("paymentId", paymentId)
			.map((row) -> row.get("n", Long.class))
			.one();
	}

}
