/**
 * {@code @Idempotent} on annotated WebFlux handler methods that return {@code Mono<T>} or
 * {@code Mono<ResponseEntity<T>>}, or a plain {@code T} or {@code ResponseEntity<T>} with
 * blocking execution and Reactor's automatic context propagation: the adapter ({@link
 * io.github.idempotency.web.reactive.ReactiveHandlerMethodIdempotency}), the filter that
 * hands it the exchange and digests the body ({@link
 * io.github.idempotency.web.reactive.IdempotencyExchangeFilter}) and the problems it
 * answers with ({@link io.github.idempotency.web.reactive.ReactiveIdempotencyProblemHandler}).
 * What both HTTP stacks share lives in {@code io.github.idempotency.internal.http}; the
 * protocol lives in the engine. Functional endpoints ({@code RouterFunction}) are not
 * adapted.
 */
@NullMarked
package io.github.idempotency.web.reactive;

import org.jspecify.annotations.NullMarked;
