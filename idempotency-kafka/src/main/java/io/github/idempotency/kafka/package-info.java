/**
 * The Kafka glue: the not-retryable outcomes sent to the error handler's recoverer, the
 * {@code Header} key converter, batch listeners and listeners that acknowledge by hand.
 */
@NullMarked
package io.github.idempotency.kafka;

import org.jspecify.annotations.NullMarked;
