package io.github.idempotency.autoconfigure.aop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyKafkaAutoConfiguration;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.listener.BatchListenerFailedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @Idempotent(batch = ...)} on a batch listener method, called as the Kafka
 * container calls it (the broker itself: {@code KafkaBatchIdempotencyTest}).
 */
class IdempotentBatchListenerTest {

	private static final String WORKFLOW = "payment";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyKafkaAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory")
		.withUserConfiguration(Listeners.class);

	@Test
	void theMethodReceivesOnlyTheNewRecordsInTheirOrderAndAKeyNamedTwiceOnce() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			listener.onPayments(batch("a", "b"));
			listener.onPayments(batch("a", "c", "b", "c", "d"));
			assertThat(listener.received()).containsExactly(List.of("a", "b"), List.of("c", "d"));
			listener.onPayments(batch("d", "a"));
			assertThat(listener.received()).as("a batch of duplicates does not call the method").hasSize(2);
			assertThat(status(context, "c")).isEqualTo(RecordStatus.COMPLETED);
		});
	}

	@Test
	void aFailedRecordsIndexIsTranslatedToItsPositionInTheBatchTheContainerPassed() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			listener.onPayments(batch("a"));
			// the method receives [b, fail, d]: it reports index 1, the container knows it as 3
			assertThatExceptionOfType(BatchListenerFailedException.class)
				.isThrownBy(() -> listener.onPayments(batch("a", "b", "a", "fail", "d")))
				.satisfies((ex) -> {
					assertThat(ex.getIndex()).isEqualTo(3);
					assertThat(ex.getCause()).isInstanceOf(IllegalStateException.class).hasMessage("broker down");
					assertThat(ex.getMessage()).isEqualTo("fail failed @-3");
				});
			assertThat(listener.received()).last().isEqualTo(List.of("b", "fail", "d"));
			assertThat(status(context, "b")).isEqualTo(RecordStatus.COMPLETED);
			assertThat(find(context, "fail")).isNull();
			assertThat(find(context, "d")).isNull();
		});
	}

	@Test
	void aFailedRecordNamedByItselfIsRethrownAsItIs() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			listener.failByRecord(true);
			listener.onPayments(batch("a"));
			List<ConsumerRecord<String, String>> batch = batch("a", "b", "fail", "d");
			assertThatExceptionOfType(BatchListenerFailedException.class)
				.isThrownBy(() -> listener.onPayments(batch))
				.satisfies((ex) -> assertThat(ex.getRecord()).isSameAs(batch.get(2)));
			assertThat(status(context, "b")).isEqualTo(RecordStatus.COMPLETED);
			assertThat(find(context, "fail")).isNull();
			assertThat(find(context, "d")).isNull();
		});
	}

	@Test
	void aPermanentFailureIsRecordedAndItsRecordSkippedOnRedelivery() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			assertThatExceptionOfType(BatchListenerFailedException.class)
				.isThrownBy(() -> listener.onPayments(batch("b", "decline", "d")))
				.satisfies((ex) -> assertThat(ex.getIndex()).isEqualTo(1));
			assertThat(status(context, "decline")).isEqualTo(RecordStatus.FAILED);
			listener.onPayments(batch("decline", "d"));
			assertThat(listener.received()).last().isEqualTo(List.of("d"));
		});
	}

	@Test
	void anyOtherExceptionReleasesTheWholeBatchAndIsRethrownUnchanged() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			listener.onPayments(batch("a"));
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> listener.onPayments(batch("a", "b", "crash", "d")))
				.isSameAs(PaymentListener.CRASH);
			assertThat(status(context, "a")).isEqualTo(RecordStatus.COMPLETED);
			assertThat(find(context, "b")).isNull();
			assertThat(find(context, "crash")).isNull();
			assertThat(find(context, "d")).isNull();
		});
	}

	@Test
	void aKeyReusedWithAnotherPayloadFailsTheBatchAtThatRecord() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			listener.onPayments(batch("a"));
			List<ConsumerRecord<String, String>> batch = batch("b", "a", "c");
			batch.set(1, record(1, "a", "999"));
			assertThatExceptionOfType(BatchListenerFailedException.class).isThrownBy(() -> listener.onPayments(batch))
				.satisfies((ex) -> {
					assertThat(ex.getIndex()).isEqualTo(1);
					assertThat(ex.getCause()).isInstanceOf(IdempotencyKeyReusedException.class);
				});
			assertThat(listener.received()).last().isEqualTo(List.of("b"));
			assertThat(status(context, "b")).isEqualTo(RecordStatus.COMPLETED);
			assertThat(find(context, "c")).as("after the failed record: released, redelivered").isNull();
		});
	}

	@Test
	void aRecordWithoutAKeyFailsTheBatchAtThatRecord() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			List<ConsumerRecord<String, String>> batch = batch("b", "c", "d");
			batch.get(1).headers().remove("idempotency-key");
			assertThatExceptionOfType(BatchListenerFailedException.class).isThrownBy(() -> listener.onPayments(batch))
				.satisfies((ex) -> {
					assertThat(ex.getIndex()).isEqualTo(1);
					assertThat(ex.getCause()).isInstanceOf(MissingIdempotencyKeyException.class);
				});
			assertThat(listener.received()).containsExactly(List.of("b"));
			assertThat(status(context, "b")).isEqualTo(RecordStatus.COMPLETED);
			assertThat(find(context, "d")).isNull();
		});
	}

	@Test
	void aKeyExpressionThatFailsOnOneRecordFailsTheBatchAtThatRecordAsAnInvalidKey() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			List<ConsumerRecord<String, String>> batch = batch("b", "c", "d");
			batch.set(1, record(1, "c", null));
			assertThatExceptionOfType(BatchListenerFailedException.class)
				.isThrownBy(() -> listener.onPaymentsByValue(batch))
				.satisfies((ex) -> {
					assertThat(ex.getIndex()).isEqualTo(1);
					assertThat(ex.getCause()).isInstanceOf(InvalidIdempotencyKeyException.class)
						.hasMessageContaining("#item.value().trim()");
				});
			assertThat(listener.received()).containsExactly(List.of("b"));
		});
	}

	@Test
	void withoutKafkaAKeyReusedWithAnotherPayloadIsSkipped() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
					IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempotency.backend=memory")
			.withUserConfiguration(Listeners.class)
			.run((context) -> {
				PaymentListener listener = context.getBean(PaymentListener.class);
				listener.onPayments(batch("a"));
				List<ConsumerRecord<String, String>> batch = batch("b", "a", "c");
				batch.set(1, record(1, "a", "999"));
				listener.onPayments(batch);
				assertThat(listener.received()).last().isEqualTo(List.of("b", "c"));
			});
	}

	@Test
	void aKeyRunningElsewhereRejectsTheBatchReleasingWhatItAcquired() {
		this.runner.run((context) -> {
			PaymentListener listener = context.getBean(PaymentListener.class);
			context.getBean(IdempotencyStore.class)
				.claim(new ClaimRequest(new RecordId(WORKFLOW, "busy"), "elsewhere", null,
						java.time.Duration.ofSeconds(30), java.time.Duration.ofDays(1)));
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> listener.onRejectingPayments(batch("a", "busy")));
			assertThat(listener.received()).isEmpty();
			assertThat(find(context, "a")).isNull();
		});
	}

	@Test
	void aBatchMethodMustReturnVoid() {
		this.runner.withUserConfiguration(ReturningListener.class).run((context) -> assertThat(context)
			.getFailure()
			.hasMessageContaining(ReturningListener.class.getName() + ".onPayments")
			.hasMessageContaining("must return void"));
	}

	@Test
	void theBatchAttributeMustNameAListParameter() {
		this.runner.withUserConfiguration(NotAListListener.class).run((context) -> assertThat(context)
			.getFailure()
			.hasMessageContaining(NotAListListener.class.getName() + ".onPayment")
			.hasMessageContaining("not java.util.List"));
		this.runner.withUserConfiguration(MisnamedListener.class).run((context) -> assertThat(context)
			.getFailure()
			.hasMessageContaining(MisnamedListener.class.getName() + ".onPayments")
			.hasMessageContaining("names no parameter"));
	}

	private static RecordStatus status(AssertableApplicationContext context, String key) {
		return context.getBean(IdempotencyStore.class).find(new RecordId(WORKFLOW, key)).orElseThrow().status();
	}

	private static Object find(AssertableApplicationContext context, String key) {
		return context.getBean(IdempotencyStore.class).find(new RecordId(WORKFLOW, key)).orElse(null);
	}

	private static List<ConsumerRecord<String, String>> batch(String... keys) {
		List<ConsumerRecord<String, String>> records = new ArrayList<>();
		for (int i = 0; i < keys.length; i++) {
			records.add(record(i, keys[i], "100"));
		}
		return records;
	}

	private static ConsumerRecord<String, String> record(long offset, String key, String value) {
		ConsumerRecord<String, String> record = new ConsumerRecord<>("payments", 0, offset, key, value);
		record.headers().add("idempotency-key", key.getBytes(StandardCharsets.UTF_8));
		return record;
	}

	@Configuration(proxyBeanMethods = false)
	static class Listeners {

		@Bean
		PaymentListener paymentListener() {
			return new PaymentListener();
		}

	}

	static class PaymentListener {

		static final IllegalArgumentException CRASH = new IllegalArgumentException("crash");

		private final List<List<String>> received = new CopyOnWriteArrayList<>();

		private boolean failByRecord;

		// the bean is a class-based proxy: its fields are read through methods

		public List<List<String>> received() {
			return this.received;
		}

		public void failByRecord(boolean failByRecord) {
			this.failByRecord = failByRecord;
		}

		@Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", payload = "#item.value()",
				workflow = WORKFLOW, recordFailureFor = CardDeclinedException.class)
		public void onPayments(List<ConsumerRecord<String, String>> records) {
			this.received.add(records.stream().map(ConsumerRecord::key).toList());
			for (int i = 0; i < records.size(); i++) {
				switch (records.get(i).key()) {
					case "fail" -> throw this.failByRecord
							? new BatchListenerFailedException("fail failed", new IllegalStateException("broker down"),
									records.get(i))
							: new BatchListenerFailedException("fail failed", new IllegalStateException("broker down"),
									i);
					case "decline" -> throw new BatchListenerFailedException("declined", new CardDeclinedException(),
							i);
					case "crash" -> throw CRASH;
					default -> {
					}
				}
			}
		}

		@Idempotent(batch = "records", key = "#item.value().trim()", workflow = WORKFLOW + "-by-value")
		public void onPaymentsByValue(List<ConsumerRecord<String, String>> records) {
			this.received.add(records.stream().map(ConsumerRecord::key).toList());
		}

		@Idempotent(batch = "records", key = "#item.key()", workflow = WORKFLOW,
				onInProgress = InProgressPolicy.REJECT)
		public void onRejectingPayments(List<ConsumerRecord<String, String>> records) {
			this.received.add(records.stream().map(ConsumerRecord::key).toList());
		}

	}

	static class CardDeclinedException extends RuntimeException {

	}

	@Configuration(proxyBeanMethods = false)
	static class ReturningListener {

		@Idempotent(batch = "records", key = "#item.key()")
		public String onPayments(List<ConsumerRecord<String, String>> records) {
			return "done";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NotAListListener {

		@Idempotent(batch = "record", key = "#item.key()")
		public void onPayment(ConsumerRecord<String, String> record) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class MisnamedListener {

		@Idempotent(batch = "recods", key = "#item.key()")
		public void onPayments(List<ConsumerRecord<String, String>> records) {
		}

	}

}
