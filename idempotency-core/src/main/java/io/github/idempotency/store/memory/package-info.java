/**
 * The {@code memory} store: records in this JVM's memory, for tests and demos.
 */
package io.github.idempotency.store.memory;
