package io.github.idempotency.store;

import java.time.Duration;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;
import org.springframework.util.StringUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link RecordId#toString()}: the text of logs and exception messages keeps the workflow
 * and the key apart.
 */
class RecordIdTest {

	@Test
	void bothPartsAreQuoted() {
		assertThat(new RecordId("payment", "p-1")).hasToString("workflow 'payment' key 'p-1'");
	}

	@Test
	void aSlashInEitherPartNoLongerMakesTwoRecordsReadTheSame() {
		assertThat(new RecordId("a/b", "c")).hasToString("workflow 'a/b' key 'c'");
		assertThat(new RecordId("a", "b/c")).hasToString("workflow 'a' key 'b/c'");
	}

	@Test
	void quotesAndBackslashesAreEscaped() {
		RecordId forged = new RecordId("a' key 'b", "c");
		RecordId plain = new RecordId("a", "b' key 'c");
		assertThat(forged).hasToString("workflow 'a\\' key \\'b' key 'c'");
		assertThat(plain).hasToString("workflow 'a' key 'b\\' key \\'c'");
		assertThat(new RecordId("C:\\", "it's")).hasToString("workflow 'C:\\\\' key 'it\\'s'");
	}

	@Test
	void controlCharactersCannotForgeALogLine() {
		assertThat(new RecordId("w", "k\nINFO forged\r\t\u0000\u2028"))
			.hasToString("workflow 'w' key 'k\\nINFO forged\\r\\t\\u0000\\u2028'");
	}

	@Test
	void unpairedSurrogatesAreEscapedAndPairsKept() {
		assertThat(new RecordId("w", "\ud83d\ude00 \ud83d")).hasToString("workflow 'w' key '\ud83d\ude00 \\ud83d'");
	}

	@Test
	void exceptionMessagesReadBothParts() {
		IdempotencyEngine engine = new IdempotencyEngine(new UnreachableIdempotencyStore("redis"),
				JsonMapper.builder().build(), EngineSettings.defaults(), IdempotencyObserver.NONE);
		IdempotentOperation operation = engine.prepare(OperationDefinition.of("a/b", String.class)
			.fingerprinted(false)
			.build());
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> engine.execute(operation, "c", null, () -> "ran"))
			.withMessageStartingWith("The idempotency store could not claim workflow 'a/b' key 'c';");
		engine.close();
	}

	@Property(tries = 2000)
	void theTextReadsBackAsTheSameRecord(@ForAll("parts") String workflow, @ForAll("parts") String key) {
		RecordId id = new RecordId(workflow, key);
		assertThat(parse(id.toString())).isEqualTo(id);
	}

	@Property(tries = 2000)
	void movingTextAcrossTheBoundaryChangesTheText(@ForAll("parts") String left, @ForAll("parts") String middle,
			@ForAll("parts") String right, @ForAll("joiners") String joiner) {
		RecordId one = new RecordId(left + joiner + middle, right);
		RecordId other = new RecordId(left, middle + joiner + right);
		assertThat(one.toString()).isNotEqualTo(other.toString());
	}

	@Provide
	Arbitrary<String> joiners() {
		return Arbitraries.of("/", ":", " ", "' key '", "\\' key \\'", " key ", "'");
	}

	@Provide
	Arbitrary<String> parts() {
		return Arbitraries.strings()
			.withChars('\'', '\\', ' ', '/', ':', 'a', 'k', 'e', 'y', 'w', '\n', '\r', '\t', '\u0000', '\u2028',
					'\ud83d', '\ude00', 'é')
			.ofMinLength(1)
			.ofMaxLength(12)
			.filter(StringUtils::hasText);
	}

	/**
	 * Reads {@code toString()} back: the text is a faithful encoding, so no two records
	 * can share it.
	 */
	private static RecordId parse(String text) {
		Reader reader = new Reader(text);
		reader.expect("workflow ");
		String workflow = reader.quoted();
		reader.expect(" key ");
		String key = reader.quoted();
		assertThat(reader.position).as("end of " + text).isEqualTo(text.length());
		return new RecordId(workflow, key);
	}

	private static final class Reader {

		private final String text;

		private int position;

		Reader(String text) {
			this.text = text;
		}

		void expect(String literal) {
			assertThat(this.text.startsWith(literal, this.position)).as(literal + " in " + this.text).isTrue();
			this.position += literal.length();
		}

		String quoted() {
			expect("'");
			StringBuilder value = new StringBuilder();
			while (true) {
				char c = this.text.charAt(this.position++);
				if (c == '\'') {
					return value.toString();
				}
				if (c != '\\') {
					assertThat(Character.isISOControl(c)).as("raw control character").isFalse();
					value.append(c);
					continue;
				}
				char escaped = this.text.charAt(this.position++);
				switch (escaped) {
					case '\'', '\\' -> value.append(escaped);
					case 'n' -> value.append('\n');
					case 'r' -> value.append('\r');
					case 't' -> value.append('\t');
					case 'u' -> {
						value.append((char) Integer.parseInt(this.text.substring(this.position, this.position + 4), 16));
						this.position += 4;
					}
					default -> throw new IllegalStateException("unknown escape \\" + escaped + " in " + this.text);
				}
			}
		}

	}

}
