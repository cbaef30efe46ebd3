/**
 * The contract kit: {@code IdempotencyStoreContract}, the suite every store passes, and
 * the {@code MutableClock} it moves.
 */
package io.github.idempotency.test;
