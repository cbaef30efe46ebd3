package io.github.idempotency.internal;

import java.lang.reflect.Type;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.ValueSerializer;
import tools.jackson.databind.deser.AbstractDeserializer;
import tools.jackson.databind.deser.bean.BeanDeserializerBase;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.ser.impl.UnknownSerializer;

/**
 * Writes results to JSON and reads them back as the operation's declared type, with the
 * application's {@link JsonMapper}. Types come from the method signature, never from the
 * store (no default typing, no class names in records).
 */
final class ResultCodec {

	private final JavaType type;

	private final @Nullable ObjectWriter writer;

	private final @Nullable ObjectReader reader;

	private ResultCodec(JavaType type, @Nullable ObjectWriter writer, @Nullable ObjectReader reader) {
		this.type = type;
		this.writer = writer;
		this.reader = reader;
	}

	/**
	 * A codec for {@code resultType}, checked now: a type Jackson cannot write or read
	 * back fails here rather than after the method ran.
	 * @param jsonMapper the application's mapper
	 * @param resultType the declared result type
	 * @return the codec
	 * @throws IllegalStateException when the type cannot round-trip
	 */
	static ResultCodec forType(JsonMapper jsonMapper, Type resultType) {
		JavaType type = jsonMapper.getTypeFactory().constructType(resultType);
		if (type.hasRawClass(void.class) || type.hasRawClass(Void.class)) {
			return new ResultCodec(type, null, null);
		}
		try {
			ValueSerializer<Object> serializer = jsonMapper._serializationContext()
				.findTypedValueSerializer(type, true);
			if (serializer instanceof UnknownSerializer
					&& jsonMapper.isEnabled(SerializationFeature.FAIL_ON_EMPTY_BEANS)) {
				throw new IllegalStateException("Jackson finds no properties to write in " + type);
			}
			ValueDeserializer<Object> deserializer = jsonMapper._deserializationContext()
				.findRootValueDeserializer(type);
			if (deserializer instanceof AbstractDeserializer) {
				throw new IllegalStateException("Jackson cannot create instances of the abstract type " + type);
			}
			if (deserializer instanceof BeanDeserializerBase bean && !bean.getValueInstantiator().canInstantiate()) {
				throw new IllegalStateException("Jackson finds no constructor or factory to create " + type);
			}
		}
		catch (JacksonException ex) {
			throw new IllegalStateException("Jackson cannot write and read back " + type + ": " + ex.getOriginalMessage(),
					ex);
		}
		return new ResultCodec(type, jsonMapper.writerFor(type), jsonMapper.readerFor(type));
	}

	@Nullable String write(@Nullable Object result) {
		return (this.writer != null) ? this.writer.writeValueAsString(result) : null;
	}

	@Nullable Object read(@Nullable String response) {
		if (this.reader == null) {
			return null;
		}
		if (response == null) {
			throw new IllegalStateException("no result is stored");
		}
		return this.reader.readValue(response);
	}

	JavaType type() {
		return this.type;
	}

}
