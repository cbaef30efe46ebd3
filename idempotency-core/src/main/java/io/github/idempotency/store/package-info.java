/**
 * The store SPI: the atomic steps a store answers ({@code IdempotencyStore},
 * {@code ClaimHandle}), the records, the claim rules every store shares, and the scheduled
 * cleanup of expired records.
 */
@NullMarked
package io.github.idempotency.store;

import org.jspecify.annotations.NullMarked;
