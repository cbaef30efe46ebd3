package io.github.idempotency.autoconfigure;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.kafka.IdempotencyKafkaErrorHandlerPostProcessor;
import io.github.idempotency.kafka.KafkaHeaderKeyConverter;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.CommonLoggingErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the Kafka auto-configuration per test.
 */
class IdempotencyKafkaAutoConfigurationTest {

	private static final byte[] UTF8_KEY = "m-1".getBytes(StandardCharsets.UTF_8);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyKafkaAutoConfiguration.class));

	@Test
	void aUsersDefaultErrorHandlerBeanSendsTheNotRetryableExceptionsToItsRecovererAtOnce() {
		this.runner.withBean("errorHandler", DefaultErrorHandler.class, () -> new DefaultErrorHandler(new FixedBackOff(0, 5)))
			.run((context) -> {
				DefaultErrorHandler handler = context.getBean(DefaultErrorHandler.class);
				assertNotRetryable(handler);
				assertThat(handler.removeClassification(IdempotencyInProgressException.class)).isNull();
			});
	}

	@Test
	void withoutAnErrorHandlerBeanAClassifiedDefaultErrorHandlerIsDefined() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(CommonErrorHandler.class);
			assertNotRetryable(context.getBean(DefaultErrorHandler.class));
		});
	}

	@Test
	void aUsersOtherErrorHandlerIsLeftAlone() {
		this.runner.withBean(CommonLoggingErrorHandler.class)
			.run((context) -> assertThat(context).hasSingleBean(CommonErrorHandler.class)
				.doesNotHaveBean(DefaultErrorHandler.class));
	}

	@Test
	void withoutSpringKafkaNothingIsConfigured() {
		this.runner.withClassLoader(new FilteredClassLoader(DefaultErrorHandler.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyKafkaErrorHandlerPostProcessor.class));
	}

	@Test
	void theEngineMakesAKafkaHeaderAKeyByItsValue() {
		this.runner.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class)).run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			template.run(IdempotentRequest.of("payment", new RecordHeader("idempotency-key", UTF8_KEY)), () -> {
			});
			assertThat(context.getBean(IdempotencyStore.class).find(new RecordId("payment", "m-1"))).isPresent();
		});
	}

	@Test
	void withoutSpringKafkaAKafkaHeaderStillBecomesAKey() {
		this.runner.withClassLoader(new FilteredClassLoader(DefaultErrorHandler.class))
			.run((context) -> assertThat(context).hasSingleBean(KafkaHeaderKeyConverter.class));
	}

	@Test
	void withoutKafkaNoKeyConverterIsDefined() {
		this.runner.withClassLoader(new FilteredClassLoader("org.apache.kafka"))
			.run((context) -> assertThat(context).doesNotHaveBean(KafkaHeaderKeyConverter.class));
	}

	private static void assertNotRetryable(DefaultErrorHandler handler) {
		assertThat(handler.removeClassification(IdempotencyKeyReusedException.class)).isFalse();
		assertThat(handler.removeClassification(IdempotentFailureReplayedException.class)).isFalse();
		assertThat(handler.removeClassification(MissingIdempotencyKeyException.class)).isFalse();
		assertThat(handler.removeClassification(InvalidIdempotencyKeyException.class)).isFalse();
	}

}
