/**
 * The engine: the idempotency protocol, written once (see {@code docs/architecture.md}).
 * <p>
 * <strong>Not API.</strong> The types here are public only so that the starter's own
 * modules (the auto-configuration, the broker glue) can build and call the engine; they
 * may change in any release. Applications use {@code @Idempotent},
 * {@code IdempotencyTemplate} and {@code IdempotencyContext}; stores implement
 * {@code io.github.idempotency.store}; meters implement {@code io.github.idempotency.observe}.
 */
@NullMarked
package io.github.idempotency.internal;

import org.jspecify.annotations.NullMarked;
