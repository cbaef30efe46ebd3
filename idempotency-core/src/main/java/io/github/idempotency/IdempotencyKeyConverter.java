package io.github.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Turns a key value of a type the engine does not know, such as a broker's message
 * header, into the bytes the key is made of. The engine knows text, {@code byte[]} and
 * {@code ByteBuffer} itself and turns anything else into text with {@code toString()}
 * unless a converter answers first; bytes become the key as described in docs/semantics.md, "Key
 * forms" (valid UTF-8 as its text, other bytes in a binary form).
 * <p>
 * The Kafka auto-configuration registers one for Kafka's {@code Header}; an application
 * adds its own as a bean. Converters are asked in order; the first one that does not
 * answer {@code null} wins.
 */
@FunctionalInterface
public interface IdempotencyKeyConverter {

	/**
	 * The bytes of {@code value}'s key.
	 * @param value a key value that is neither text, {@code byte[]} nor
	 * {@code ByteBuffer}
	 * @return the key's bytes (empty for a value without content), or {@code null} when
	 * this converter does not handle {@code value}'s type
	 */
	byte @Nullable [] toBytes(Object value);

}
