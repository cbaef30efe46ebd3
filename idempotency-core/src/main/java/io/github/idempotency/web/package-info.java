/**
 * {@code @Idempotent} on Spring MVC handler methods: the adapter ({@link
 * io.github.idempotency.web.HandlerMethodIdempotency}), the filter that keeps what the
 * client received until the run is settled ({@link
 * io.github.idempotency.web.IdempotencyResponseFilter}), the resolver that replays it
 * byte for byte ({@link io.github.idempotency.web.CapturedFailureResolver}) and the
 * problems it answers with ({@link io.github.idempotency.web.IdempotencyProblemHandler}).
 * What both HTTP stacks share lives in {@code io.github.idempotency.internal.http}; the
 * protocol lives in the engine.
 */
@NullMarked
package io.github.idempotency.web;

import org.jspecify.annotations.NullMarked;
