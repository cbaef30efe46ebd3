package io.github.idempotency.sample.webflux;

/**
 * A charged payment.
 *
 * @param id the id of the charge (the {@code payment} row)
 * @param paymentId the business id of the payment
 * @param amountCents the amount in cents
 */
public record Receipt(long id, String paymentId, long amountCents) {
}
