package io.github.idempotency.autoconfigure.aop;

import io.github.idempotency.aop.IdempotentAdvisor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.Message;
import org.springframework.messaging.support.MessageBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link Idempotent} on bean methods, through the auto-configured advisor.
 */
class IdempotentAspectTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void secondCallWithTheSameKeyReturnsTheStoredResult() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			PaymentService payments = context.getBean(PaymentService.class);
			Receipt first = payments.charge(new PaymentRequest("p-1", 100));
			Receipt second = payments.charge(new PaymentRequest("p-1", 100));
			assertThat(second).isEqualTo(first);
			assertThat(payments.charges()).isOne();
			assertThat(context.getBean(IdempotencyStore.class).find(new RecordId("payment", "p-1"))).isPresent();
		});
	}

	@Test
	void payloadFingerprintCatchesAReusedKey() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			PaymentService payments = context.getBean(PaymentService.class);
			payments.charge(new PaymentRequest("p-1", 100));
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> payments.charge(new PaymentRequest("p-1", 999)));
			assertThat(payments.charges()).isOne();
		});
	}

	@Test
	void argumentsAreReachableByNameAndPosition() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			PaymentService payments = context.getBean(PaymentService.class);
			assertThat(payments.byPosition("a", "x")).isEqualTo("x1");
			assertThat(payments.byPosition("a", "y")).isEqualTo("x1");
			assertThat(payments.byAlias("b", "z")).isEqualTo("z2");
			assertThat(payments.byAlias("b", "w")).isEqualTo("z2");
		});
	}

	@Test
	void workflowDefaultsToClassMethodAndParameterTypes() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			context.getBean(PaymentService.class).byPosition("k", "v");
			assertThat(context.getBean(IdempotencyStore.class)
				.find(new RecordId(PaymentService.class.getName() + ".byPosition(String,String)", "k"))).isPresent();
		});
	}

	@Test
	void keyFromAMessageHeaderInBytes() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			PaymentService payments = context.getBean(PaymentService.class);
			Message<String> message = MessageBuilder.withPayload("refund")
				.setHeader("idempotency-key", "m-1".getBytes(StandardCharsets.UTF_8))
				.build();
			payments.onMessage(message);
			payments.onMessage(message);
			assertThat(payments.charges()).isOne();
			assertThat(context.getBean(IdempotencyStore.class).find(new RecordId("refund", "m-1"))).isPresent();
			assertThatExceptionOfType(MissingIdempotencyKeyException.class)
				.isThrownBy(() -> payments.onMessage(MessageBuilder.withPayload("refund").build()));
		});
	}

	@Test
	void genericResultsAreReadBackAsTheirDeclaredType() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			PaymentService payments = context.getBean(PaymentService.class);
			List<Receipt> first = payments.history("c-1");
			List<Receipt> second = payments.history("c-1");
			assertThat(second).isEqualTo(first).first().isInstanceOf(Receipt.class);
		});
	}

	@Test
	void templateAndAnnotationShareRecords() {
		this.runner.withUserConfiguration(Payments.class).run((context) -> {
			PaymentService payments = context.getBean(PaymentService.class);
			Receipt viaAnnotation = payments.charge(new PaymentRequest("p-9", 5));
			Receipt viaTemplate = context.getBean(IdempotencyTemplate.class)
				.execute(IdempotentRequest.of("payment", "p-9").withPayload(new PaymentRequest("p-9", 5)),
						Receipt.class, () -> new Receipt("never", 0, 0));
			assertThat(viaTemplate).isEqualTo(viaAnnotation);
		});
	}

	@Test
	void malformedKeyExpressionFailsTheStartNamingTheMethod() {
		this.runner.withUserConfiguration(BrokenKey.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(org.springframework.expression.ParseException.class);
			assertThat(context.getStartupFailure()).hasMessageContaining(BrokenKeyService.class.getName() + ".handle")
				.hasMessageContaining("'key' is not a valid SpEL expression");
		});
	}

	@Test
	void resultTypeJacksonCannotReadBackFailsTheStartNamingTheMethod() {
		this.runner.withUserConfiguration(BrokenResult.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining(BrokenResultService.class.getName() + ".handle")
				.hasMessageContaining("abstract type");
		});
	}

	@Test
	void badDurationFailsTheStartNamingTheMethod() {
		this.runner.withUserConfiguration(BrokenDuration.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining(BrokenDurationService.class.getName() + ".handle")
				.hasMessageContaining("'leaseTtl' = 'soon'");
		});
	}

	@Test
	void advisorOrderIsAProperty() {
		this.runner.withPropertyValues("idempotency.aspect-order=42")
			.run((context) -> assertThat(context.getBean("idempotentAdvisor", IdempotentAdvisor.class).getOrder()).isEqualTo(42));
	}

	record PaymentRequest(String id, int amount) {
	}

	record Receipt(String paymentId, int amount, int sequence) {
	}

	static class PaymentService {

		final AtomicInteger charges = new AtomicInteger();

		public int charges() {
			return this.charges.get();
		}

		@Idempotent(key = "#request.id", workflow = "payment", payload = "#request")
		public Receipt charge(PaymentRequest request) {
			return new Receipt(request.id(), request.amount(), this.charges.incrementAndGet());
		}

		@Idempotent(key = "#p0")
		public String byPosition(String key, String value) {
			return value + "1";
		}

		@Idempotent(key = "#a0", workflow = "alias")
		public String byAlias(String key, String value) {
			return value + "2";
		}

		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "refund")
		public void onMessage(Message<String> msg) {
			this.charges.incrementAndGet();
		}

		@Idempotent(key = "#customer", workflow = "history")
		public List<Receipt> history(String customer) {
			return List.of(new Receipt(customer, 1, this.charges.incrementAndGet()));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Payments {

		@Bean
		PaymentService paymentService() {
			return new PaymentService();
		}

	}

	static class BrokenKeyService {

		@Idempotent(key = "#request.id)")
		public void handle(PaymentRequest request) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BrokenKey {

		@Bean
		BrokenKeyService brokenKeyService() {
			return new BrokenKeyService();
		}

	}

	static class BrokenResultService {

		@Idempotent(key = "#p0")
		public Runnable handle(String key) {
			return () -> {
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BrokenResult {

		@Bean
		BrokenResultService brokenResultService() {
			return new BrokenResultService();
		}

	}

	static class BrokenDurationService {

		@Idempotent(key = "#p0", leaseTtl = "soon")
		public void handle(String key) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BrokenDuration {

		@Bean
		BrokenDurationService brokenDurationService() {
			return new BrokenDurationService();
		}

	}

}
