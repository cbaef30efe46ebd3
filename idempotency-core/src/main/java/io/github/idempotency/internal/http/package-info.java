/**
 * What the HTTP adapters share, whatever the stack (Spring MVC in
 * {@code io.github.idempotency.web}, WebFlux in {@code io.github.idempotency.web.reactive}):
 * the key header ({@link io.github.idempotency.internal.http.IdempotencyKeyHeader}), the
 * key's scope ({@link io.github.idempotency.internal.http.KeyScope}), the request's
 * fingerprint ({@link io.github.idempotency.internal.http.HttpFingerprint}), what the
 * client received and how a claimed exchange is settled with it
 * ({@link io.github.idempotency.internal.http.HttpAnswer},
 * {@link io.github.idempotency.internal.http.ExchangeRun},
 * {@link io.github.idempotency.internal.http.RecordedHttpFailure}), which handler methods
 * take multipart parts ({@link io.github.idempotency.internal.http.MultipartParameters}), the problems
 * answered ({@link io.github.idempotency.internal.http.IdempotencyProblems}), and, for
 * WebFlux, the request bound to the thread that calls a handler method with a plain
 * result ({@link io.github.idempotency.internal.http.BoundExchange}). Each is
 * written once; an adapter only reads its stack's request and writes its stack's response.
 * <p>
 * <strong>Not API.</strong> Public only for the starter's own adapters; it may change in any
 * release.
 */
@NullMarked
package io.github.idempotency.internal.http;

import org.jspecify.annotations.NullMarked;
