package io.github.idempotency;

/**
 * The starter's engine, as the type its bean is declared with: what
 * {@link IdempotencyTemplate}, {@link Idempotent} methods and the HTTP and broker adapters
 * run on, one per application. It has no methods for applications, which use the template
 * and the annotation; only the starter builds one, and only the starter's engine implements
 * this interface (the starter's classes that take one refuse any other with an
 * {@link IllegalArgumentException}).
 */
public interface IdempotencyRuntime {

}
