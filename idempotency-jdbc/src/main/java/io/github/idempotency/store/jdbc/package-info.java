/**
 * The {@code jdbc} store: one row per record, a claim leased or inside the caller's
 * transaction, one statement source per database and the shipped schema scripts.
 */
@NullMarked
package io.github.idempotency.store.jdbc;

import org.jspecify.annotations.NullMarked;
