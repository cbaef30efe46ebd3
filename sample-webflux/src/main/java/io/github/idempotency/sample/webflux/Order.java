package io.github.idempotency.sample.webflux;

/**
 * A payment to charge.
 *
 * @param paymentId the business id of the payment
 * @param amountCents the amount in cents, positive
 */
public record Order(String paymentId, long amountCents) {
}
