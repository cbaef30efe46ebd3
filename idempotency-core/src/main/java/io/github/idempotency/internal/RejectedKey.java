package io.github.idempotency.internal;

/**
 * A key value its caller already found invalid (an {@code Idempotency-Key} header that is
 * malformed): the engine rejects it as it rejects any invalid key, with an
 * {@code InvalidIdempotencyKeyException}, counted as {@code invalid_key}.
 *
 * @param reason why it is invalid, as a sentence's end ("is malformed: ...")
 */
public record RejectedKey(String reason) {

}
