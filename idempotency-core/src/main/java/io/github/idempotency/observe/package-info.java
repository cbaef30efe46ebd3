/**
 * The observer SPI: {@link io.github.idempotency.observe.IdempotencyObserver} receives
 * what the engine does (the outcome of each call, conflicts, takeovers, lost leases, the
 * time of each store call), for meters of any kind; the Micrometer binding is
 * {@code io.github.idempotency.metrics}.
 */
@NullMarked
package io.github.idempotency.observe;

import org.jspecify.annotations.NullMarked;
