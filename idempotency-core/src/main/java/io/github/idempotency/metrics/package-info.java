/**
 * The Micrometer binding of the observer SPI: the {@code idempotency.*} meters, tagged by
 * workflow and backend.
 */
package io.github.idempotency.metrics;
