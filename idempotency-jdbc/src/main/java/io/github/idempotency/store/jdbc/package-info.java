/**
 * The {@code jdbc} store: one row per record, a claim leased or inside the caller's
 * transaction, the dialects and the shipped schema scripts.
 */
@NullMarked
package io.github.idempotency.store.jdbc;

import org.jspecify.annotations.NullMarked;
