/**
 * The Micrometer binding of the observer SPI: the {@code idempotency.*} meters, tagged by
 * workflow and backend.
 */
@NullMarked
package io.github.idempotency.metrics;

import org.jspecify.annotations.NullMarked;
