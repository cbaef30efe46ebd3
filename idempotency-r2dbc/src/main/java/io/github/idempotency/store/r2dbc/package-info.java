/**
 * The {@code r2dbc} store: the {@code jdbc} store's table and statements, non-blocking, on
 * PostgreSQL or MariaDB; a claim leased, or inside the caller's reactive transaction.
 */
@NullMarked
package io.github.idempotency.store.r2dbc;

import org.jspecify.annotations.NullMarked;
