/**
 * The API: {@code @Idempotent}, {@code IdempotencyTemplate} and
 * {@code IdempotentRequest}, {@code IdempotencyContext}, the policies, the key converters
 * and the exceptions.
 */
@NullMarked
package io.github.idempotency;

import org.jspecify.annotations.NullMarked;
