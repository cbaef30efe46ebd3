/**
 * The API: {@code @Idempotent}, {@code IdempotencyTemplate} and
 * {@code IdempotentRequest}, {@code IdempotencyContext}, the policies, the key converters
 * and the exceptions.
 */
package io.github.idempotency;
