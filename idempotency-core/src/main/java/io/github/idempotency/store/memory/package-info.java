/**
 * The {@code memory} store: records in this JVM's memory, for tests and demos.
 */
@NullMarked
package io.github.idempotency.store.memory;

import org.jspecify.annotations.NullMarked;
