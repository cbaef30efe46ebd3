package io.github.idempotency.internal;

import io.github.idempotency.IdempotencyKeyConverter;
import io.github.idempotency.observe.IdempotencyObserver;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import io.github.idempotency.InvalidIdempotencyKeyException;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.params.ParameterizedTest;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The key forms: text as is, UTF-8 bytes as their text, other bytes in a binary form that
 * no text and no other bytes can meet.
 */
class IdempotencyKeysTest {

	private static final char MARK = '\uFFFD';

	private final IdempotencyKeys keys = new IdempotencyKeys(255, List.of(Header.CONVERTER));

	@Test
	void textAndUtf8BytesAreTheSameKey() {
		assertThat(key("m-1")).isEqualTo("m-1");
		assertThat(key("m-1".getBytes(StandardCharsets.UTF_8))).isEqualTo("m-1");
		assertThat(key(ByteBuffer.wrap("zß水🙂".getBytes(StandardCharsets.UTF_8)))).isEqualTo("zß水🙂");
		assertThat(key(new Header("m-1".getBytes(StandardCharsets.UTF_8))))
			.isEqualTo("m-1");
		assertThat(key(42)).isEqualTo("42");
	}

	@Test
	void aConverterIsAskedOnlyForTypesTheKeysDoNotKnowAndTheFirstAnswerWins() {
		List<Object> asked = new ArrayList<>();
		IdempotencyKeys keys = new IdempotencyKeys(255, List.of((value) -> {
			asked.add(value);
			return (value instanceof UUID) ? "uuid".getBytes(StandardCharsets.UTF_8) : null;
		}, (value) -> "second".getBytes(StandardCharsets.UTF_8)));
		assertThat(keys.toKey("w", "text")).isEqualTo("text");
		assertThat(keys.toKey("w", "b".getBytes(StandardCharsets.UTF_8))).isEqualTo("b");
		assertThat(keys.toKey("w", UUID.randomUUID())).isEqualTo("uuid");
		assertThat(keys.toKey("w", 42)).isEqualTo("second");
		assertThat(asked).hasSize(2);
	}

	@Test
	void withoutAConverterAHeaderIsJustAnObject() {
		Header header = new Header("m-1".getBytes(StandardCharsets.UTF_8));
		assertThat(new IdempotencyKeys(255).toKey("w", header)).isEqualTo(header.toString());
	}

	@Test
	void twoDifferentBinaryKeysAreTwoKeys() {
		// lenient UTF-8 decoding turns both into one replacement character
		assertThat(key(new byte[] { (byte) 0xFF })).isEqualTo(MARK + "_w");
		assertThat(key(new byte[] { (byte) 0xFE })).isEqualTo(MARK + "_g");
	}

	@Test
	void rawUuidsAreKeptApart() {
		UUID one = UUID.fromString("c3a1e0ff-0000-4000-8000-000000000001");
		UUID other = UUID.fromString("c3a1e0fe-0000-4000-8000-000000000001");
		assertThat(key(bytes(one))).isNotEqualTo(key(bytes(other)))
			.isEqualTo(MARK + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes(one)));
		assertThat(key(ByteBuffer.wrap(bytes(one)))).isEqualTo(key(bytes(one)));
		assertThat(key(new Header(bytes(one)))).isEqualTo(key(bytes(one)));
	}

	@Test
	void aByteBufferIsReadFromItsPositionWithoutMovingIt() {
		ByteBuffer buffer = ByteBuffer.wrap(new byte[] { 'x', (byte) 0xFF, 'k' });
		buffer.position(1);
		assertThat(key(buffer)).isEqualTo(MARK + "_2s");
		assertThat(buffer.position()).isOne();
	}

	@Test
	void textThatLooksBinaryIsEscaped() {
		assertThat(key(MARK + "_w")).isEqualTo("" + MARK + MARK + "_w");
		assertThat(key((MARK + "_w").getBytes(StandardCharsets.UTF_8))).isEqualTo("" + MARK + MARK + "_w");
		assertThat(key(new byte[] { (byte) 0xFF })).isNotEqualTo(key(MARK + "_w"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "order-\uD800", "order-\uDBFF", "\uDC00order", "order-\uDC00\uD800" })
	void textWithAnUnpairedSurrogateIsAnInvalidKeyNotMergedWithOthers(String key) {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class).isThrownBy(() -> key(key))
			.withMessageContaining("unpaired surrogate")
			.withMessageContaining("'w'");
	}

	@Test
	void textWithSurrogatePairsIsKept() {
		assertThat(key("order-\uD83D\uDCB3")).isEqualTo("order-\uD83D\uDCB3");
	}

	@Test
	void theReplacementCharacterInsideTextIsKept() {
		assertThat(key("a" + MARK)).isEqualTo("a" + MARK);
	}

	@Test
	void binaryKeysAreTwoOperationsThroughTheEngine() throws Throwable {
		MemoryIdempotencyStore store = new MemoryIdempotencyStore();
		try (IdempotencyEngine engine = new IdempotencyEngine(store, JsonMapper.builder().build(),
				EngineSettings.defaults(), IdempotencyObserver.NONE)) {
			IdempotentOperation operation = engine.prepare(OperationDefinition.of("refund", Integer.class)
				.fingerprinted(false)
				.build());
			AtomicInteger runs = new AtomicInteger();
			byte[] first = bytes(UUID.fromString("c3a1e0ff-0000-4000-8000-000000000001"));
			byte[] second = bytes(UUID.fromString("c3a1e0fe-0000-4000-8000-000000000001"));
			assertThat(engine.execute(operation, first, null, runs::incrementAndGet)).isEqualTo(1);
			assertThat(engine.execute(operation, second, null, runs::incrementAndGet)).isEqualTo(2);
			assertThat(engine.execute(operation, first.clone(), null, runs::incrementAndGet)).isEqualTo(1);
		}
	}

	@Property(tries = 3000)
	void bytesReadBackFromTheirKey(@ForAll("bytes") byte[] bytes) {
		String key = IdempotencyKeys.toText(bytes);
		assertThat(meaning(key)).isEqualTo(bytes);
	}

	@Property(tries = 3000)
	void textReadsBackAsItsUtf8Bytes(@ForAll("text") String text) {
		String key = IdempotencyKeys.toText(text);
		assertThat(meaning(key)).isEqualTo(text.getBytes(StandardCharsets.UTF_8));
		assertThat(IdempotencyKeys.toText(text.getBytes(StandardCharsets.UTF_8))).isEqualTo(key);
	}

	@Property(tries = 3000)
	void twoByteSequencesShareAKeyOnlyWhenEqual(@ForAll("bytes") byte[] one, @ForAll("bytes") byte[] other) {
		assertThat(IdempotencyKeys.toText(one).equals(IdempotencyKeys.toText(other)))
			.isEqualTo(java.util.Arrays.equals(one, other));
	}

	/**
	 * Bytes: raw ones, mostly invalid UTF-8; encoded text, valid UTF-8 that may begin with
	 * U+FFFD; and encoded text with one byte broken.
	 */
	@Provide
	Arbitrary<byte[]> bytes() {
		Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMaxSize(20);
		Arbitrary<byte[]> utf8 = text().map((text) -> text.getBytes(StandardCharsets.UTF_8));
		Arbitrary<byte[]> broken = utf8.filter((bytes) -> bytes.length > 0).map((bytes) -> {
			byte[] copy = bytes.clone();
			copy[copy.length / 2] = (byte) 0xC0;
			return copy;
		});
		return Arbitraries.oneOf(raw, utf8, broken);
	}

	/**
	 * Text of whole code points (what UTF-8 can carry), with U+FFFD and the base64url
	 * alphabet over-represented, often starting with U+FFFD.
	 */
	@Provide
	Arbitrary<String> text() {
		Arbitrary<String> plain = Arbitraries.strings()
			.withChars(MARK, '_', '-', 'w', 'A', '0', ' ', 'é', '水')
			.withCharRange('\u0000', '\u007f')
			.ofMaxLength(12);
		Arbitrary<String> emoji = Arbitraries.of("🙂", "𝄞");
		return Arbitraries.oneOf(plain, plain.map((text) -> MARK + text), emoji.flatMap(
				(symbol) -> plain.map((text) -> symbol + text)));
	}

	/**
	 * The inverse of the key mapping: the bytes a key stands for. Since every key reads
	 * back to what it came from, no two different values share a key.
	 */
	private static byte[] meaning(String key) {
		if (key.length() >= 2 && key.charAt(0) == MARK && key.charAt(1) == MARK) {
			return key.substring(1).getBytes(StandardCharsets.UTF_8);
		}
		if (!key.isEmpty() && key.charAt(0) == MARK) {
			return Base64.getUrlDecoder().decode(key.substring(1));
		}
		return key.getBytes(StandardCharsets.UTF_8);
	}

	private String key(Object value) {
		return this.keys.toKey("w", value);
	}

	private static byte[] bytes(UUID uuid) {
		return ByteBuffer.allocate(16)
			.putLong(uuid.getMostSignificantBits())
			.putLong(uuid.getLeastSignificantBits())
			.array();
	}

	/**
	 * A broker's header holding a key as bytes, as a Kafka {@code Header} does, and the
	 * converter that reads it.
	 */
	record Header(byte[] value) {

		static final IdempotencyKeyConverter CONVERTER = (value) -> (value instanceof Header header) ? header.value()
				: null;

	}

}
