package io.github.idempotency.autoconfigure.aop;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.metrics.IdempotencyMeters;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.messaging.Message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Key and payload expressions that cannot work: those the parameters' declared types
 * already condemn fail the start, naming the method; those that fail on an argument at run
 * time are bad input ({@link InvalidIdempotencyKeyException}, counted as
 * {@code invalid_key}), not an exception that a broker would redeliver for ever.
 */
class IdempotentExpressionTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void springMessagingHeadersOnAnAmqpMessageFailTheStartNamingTheMethod() {
		// README's key on a listener that takes Spring AMQP's own Message, which has no headers
		this.runner.withBean(AmqpListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(AmqpListener.class.getName() + ".onPayment")
				.hasMessageContaining("#msg.headers cannot be read")
				.hasMessageContaining("org.springframework.amqp.core.Message, which has no property 'headers'");
		});
	}

	@Test
	void aNameThatIsNoParameterFailsTheStartListingTheParameters() {
		this.runner.withBean(WrongName.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(WrongName.class.getName() + ".charge")
				.hasMessageContaining("'payload' = #request")
				.hasMessageContaining("#request is not a parameter of the method")
				.hasMessageContaining("name one of its parameters: #paymentRequest (#p0, #a0)");
		});
	}

	@Test
	void aPositionBeyondTheParametersFailsTheStart() {
		this.runner.withBean(WrongPosition.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(WrongPosition.class.getName() + ".charge")
				.hasMessageContaining("#p1 is not a parameter of the method");
		});
	}

	@Test
	void aMethodTheDeclaredClassDoesNotHaveFailsTheStart() {
		this.runner.withBean(MissingMethod.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(MissingMethod.class.getName() + ".onPayment")
				.hasMessageContaining("#record.lastHeader(...) cannot be called")
				.hasMessageContaining("has no public method 'lastHeader'");
		});
	}

	@Test
	void expressionsThatCanWorkStart() {
		this.runner.withBean(Workable.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Workable workable = context.getBean(Workable.class);
			workable.amqp(MessageBuilder.withBody(new byte[0]).setHeader("idempotency-key", "a-1").build());
			workable.record(new Payment("p-1", 5));
			workable.primitive(42L);
			workable.anything(Map.of("id", "m-1"));
			assertThat(workable.runs()).isEqualTo(4);
		});
	}

	@Test
	void aKeyExpressionThatFailsOnTheArgumentIsAnInvalidKeyAndCountedSo() {
		this.runner.withBean(UncheckedAtStart.class).run((context) -> {
			UncheckedAtStart listener = context.getBean(UncheckedAtStart.class);
			// the parameter is declared as Object: the start cannot tell; the argument is bytes
			Object body = "100".getBytes(StandardCharsets.UTF_8);
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class).isThrownBy(() -> listener.onPayment(body))
				.withMessageContaining("The idempotency key of 'unchecked' cannot be resolved")
				.withMessageContaining("'key' = #msg.headers['idempotency-key'] cannot be evaluated")
				.withMessageContaining("the operation was not run")
				.withCauseInstanceOf(SpelEvaluationException.class)
				.satisfies((ex) -> assertThat(ex.isRetryable()).isFalse());
			assertThat(listener.runs()).isZero();
			assertThat(invalidKeys(context, "unchecked")).isOne();
		});
	}

	@Test
	void aPayloadExpressionThatFailsOnTheArgumentIsAnInvalidKeyToo() {
		this.runner.withBean(UncheckedAtStart.class).run((context) -> {
			UncheckedAtStart listener = context.getBean(UncheckedAtStart.class);
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
				.isThrownBy(() -> listener.withPayload("k-1", null))
				.withMessageContaining("'payload' = #event.amount cannot be evaluated")
				.withCauseInstanceOf(SpelEvaluationException.class);
			assertThat(listener.runs()).isZero();
			assertThat(invalidKeys(context, "unchecked-payload")).isOne();
		});
	}

	private static double invalidKeys(AssertableApplicationContext context, String workflow) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_WORKFLOW, workflow, IdempotencyMeters.TAG_OUTCOME, "invalid_key")
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	record Payment(String id, int amount) {
	}

	static class AmqpListener {

		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
		public void onPayment(org.springframework.amqp.core.Message msg) {
		}

	}

	static class WrongName {

		@Idempotent(key = "#paymentRequest.id", payload = "#request", workflow = "payment")
		public void charge(Payment paymentRequest) {
		}

	}

	static class WrongPosition {

		@Idempotent(key = "#p1", workflow = "payment")
		public void charge(String key) {
		}

	}

	static class MissingMethod {

		@Idempotent(key = "#record.lastHeader('idempotency-key')", workflow = "payment")
		public void onPayment(ConsumerRecord<String, String> record) {
		}

	}

	static class Workable {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#msg.messageProperties.headers['idempotency-key']", workflow = "amqp")
		public void amqp(org.springframework.amqp.core.Message msg) {
			this.runs.incrementAndGet();
		}

		@Idempotent(key = "#kafka.headers.lastHeader('idempotency-key')", workflow = "kafka")
		public void kafka(ConsumerRecord<String, String> kafka) {
			this.runs.incrementAndGet();
		}

		@Idempotent(key = "#spring.headers['idempotency-key']", workflow = "spring")
		public void spring(Message<String> spring) {
			this.runs.incrementAndGet();
		}

		@Idempotent(key = "#payment.id() + '/' + #payment.amount", payload = "#root == null ? #p0 : #a0",
				workflow = "record")
		public void record(Payment payment) {
			this.runs.incrementAndGet();
		}

		@Idempotent(key = "#id.toString()", workflow = "primitive")
		public void primitive(long id) {
			this.runs.incrementAndGet();
		}

		@Idempotent(key = "#event['id']", workflow = "map")
		public void anything(Map<String, Object> event) {
			this.runs.incrementAndGet();
		}

	}

	static class UncheckedAtStart {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "unchecked")
		public void onPayment(Object msg) {
			this.runs.incrementAndGet();
		}

		@Idempotent(key = "#key", payload = "#event.amount", workflow = "unchecked-payload")
		public void withPayload(String key, Object event) {
			this.runs.incrementAndGet();
		}

	}

}
