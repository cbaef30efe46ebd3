package io.github.idempotency.internal.http;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.internal.RejectedKey;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@code Idempotency-Key} field as RFC 8941 reads it, and the bare token accepted
 * besides.
 */
class IdempotencyKeyHeaderTest {

	private static @Nullable Object parse(String... lines) {
		return IdempotencyKeyHeader.parse("Idempotency-Key", List.of(lines));
	}

	@Test
	void aStructuredFieldStringIsItsContent() {
		assertThat(parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"")).isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
		assertThat(parse("  \"a b\"  ")).isEqualTo("a b");
		assertThat(parse("\"a\\\"b\\\\c\"")).isEqualTo("a\"b\\c");
	}

	@Test
	void parametersAreParsedAndIgnored() {
		assertThat(parse("\"k\";v=1;flag;w=\"x\";t=abc;d=1.5;b=?0;s=:AQID:")).isEqualTo("k");
	}

	@Test
	void anEmptyStringOrFieldIsAnEmptyKey() {
		assertThat(parse("\"\"")).isEqualTo("");
		assertThat(parse("")).isEqualTo("");
	}

	@Test
	void noFieldIsNoKey() {
		assertThat(IdempotencyKeyHeader.parse("Idempotency-Key", List.of())).isNull();
		assertThat(IdempotencyKeyHeader.parse("Idempotency-Key", null)).isNull();
	}

	@Test
	void aBareTokenIsTheSameKeyAsTheQuotedOne() {
		assertThat(parse("8e03978e-40d5-43e8-bc93-6894a57f9324")).isEqualTo(parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""));
		assertThat(parse("order:42/retry")).isEqualTo("order:42/retry");
	}

	@Test
	void malformedValuesAreInvalidKeys() {
		for (String malformed : List.of("\"open", "\"a\\nb\"", "\"a\" b", "a b", "\"a\",\"b\"", "\"caf\u00e9\"",
				"\"tab\there\"", "\"a\";=1", "\"a\";V=1", "\"a\";v=", "k;v=1", "a\"b", "\"a\\\"")) {
			assertThat(parse(malformed)).as(malformed).isInstanceOf(RejectedKey.class);
		}
	}

	@Test
	void twoFieldLinesAreAList() {
		assertThat(parse("\"a\"", "\"b\"")).isInstanceOf(RejectedKey.class);
	}

	@Test
	void aMalformedKeyIsRejectedByTheEngineAndCountedAsAnInvalidKey() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		MemoryIdempotencyStore store = new MemoryIdempotencyStore();
		try (IdempotencyEngine engine = IdempotencyEngine.builder(store, JsonMapper.builder().build())
			.observer(new MicrometerIdempotencyObserver(registry, store.backend()))
			.build()) {
			IdempotentOperation operation = engine.prepare(OperationDefinition.of("payment-api", String.class).build());
			Object key = KeyScope.scoped(parse("a b"), null);
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
				.isThrownBy(() -> engine.execute(operation, key, null, () -> "ran"))
				.withMessageContaining("is malformed");
			assertThat(registry.get(IdempotencyMeters.REQUESTS)
				.tag(IdempotencyMeters.TAG_OUTCOME, Outcome.INVALID_KEY.tag())
				.counter()
				.count()).isOne();
		}
	}

}
