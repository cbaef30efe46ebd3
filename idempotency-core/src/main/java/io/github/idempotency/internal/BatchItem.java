package io.github.idempotency.internal;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InvalidIdempotencyKeyException;

/**
 * One item of a batch given to {@link IdempotencyEngine#executeAll}.
 *
 * @param element the element of the caller's batch (a Kafka record, a request)
 * @param key the key value (converted and validated by the engine)
 * @param payload what is fingerprinted, when the operation is fingerprinted
 * @param invalid why the item's key or payload could not be taken from it (its expression
 * failed on it), {@code null} when they could: the item is then rejected as a single call
 * with an invalid key is, and only that item
 */
public record BatchItem(@Nullable Object element, @Nullable Object key, @Nullable Object payload,
		@Nullable InvalidIdempotencyKeyException invalid) {

	public BatchItem(@Nullable Object element, @Nullable Object key, @Nullable Object payload) {
		this(element, key, payload, null);
	}

	/**
	 * An item whose key or payload could not be taken from its element.
	 * @param element the element
	 * @param invalid why
	 * @return the item
	 */
	public static BatchItem invalid(@Nullable Object element, InvalidIdempotencyKeyException invalid) {
		return new BatchItem(element, null, null, invalid);
	}

}
