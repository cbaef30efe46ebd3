package io.github.idempotency.core;

import org.jspecify.annotations.Nullable;

/**
 * One item of a batch given to {@link IdempotencyEngine#executeAll}.
 *
 * @param element the element of the caller's batch (a Kafka record, a request)
 * @param key the key value (converted and validated by the engine)
 * @param payload what is fingerprinted, when the operation is fingerprinted
 */
public record BatchItem(@Nullable Object element, @Nullable Object key, @Nullable Object payload) {

}
