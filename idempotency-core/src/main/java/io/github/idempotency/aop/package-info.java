/**
 * The {@code @Idempotent} advisor: resolves each annotated method once (its expressions,
 * durations and result type, checked at start) and hands its calls to the engine.
 */
@NullMarked
package io.github.idempotency.aop;

import org.jspecify.annotations.NullMarked;
