/**
 * The {@code hybrid} store: finished records cached in Redis in front of another store,
 * the source of truth.
 */
@NullMarked
package io.github.idempotency.store.hybrid;

import org.jspecify.annotations.NullMarked;
