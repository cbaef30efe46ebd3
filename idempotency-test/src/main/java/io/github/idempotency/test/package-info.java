/**
 * The contract kit: {@code IdempotencyStoreContract}, the suite every store passes, and
 * the {@code MutableClock} it moves.
 */
@NullMarked
package io.github.idempotency.test;

import org.jspecify.annotations.NullMarked;
