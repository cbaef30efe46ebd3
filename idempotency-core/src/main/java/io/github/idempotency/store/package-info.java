/**
 * The store SPI: the atomic steps a store answers ({@code IdempotencyStore},
 * {@code ClaimHandle}), the records, the claim rules every store shares, and the scheduled
 * cleanup of expired records.
 */
package io.github.idempotency.store;
