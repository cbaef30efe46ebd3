package io.github.idempotency.autoconfigure.aop;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The workflow of an {@link Idempotent} method that names none is its own: overloads and
 * classes of the same simple name never share records.
 */
class IdempotentDefaultWorkflowTest {

	private static final String PREFIX = IdempotentDefaultWorkflowTest.class.getName();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void theDefaultIsTheClassTheMethodAndItsParameterTypes() {
		this.runner.withUserConfiguration(Services.class).run((context) -> {
			context.getBean(First.PaymentService.class).charge("k");
			context.getBean(First.PaymentService.class).charge("k", 5);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			assertThat(store.find(new RecordId(PREFIX + "$First$PaymentService.charge(String)", "k"))).isPresent();
			assertThat(store.find(new RecordId(PREFIX + "$First$PaymentService.charge(String,int)", "k"))).isPresent();
		});
	}

	@Test
	void twoOverloadsAreTwoOperations() {
		this.runner.withUserConfiguration(Services.class).run((context) -> {
			First.PaymentService payments = context.getBean(First.PaymentService.class);
			assertThat(payments.charge("k")).isEqualTo("charged k once");
			assertThat(payments.charge("k", 5)).isEqualTo("charged k 5 times");
			assertThat(payments.charge("k", 5)).isEqualTo("charged k 5 times");
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	@Test
	void twoClassesOfTheSameSimpleNameAreTwoOperations() {
		this.runner.withUserConfiguration(Services.class).run((context) -> {
			assertThat(context.getBean(First.PaymentService.class).charge("k")).isEqualTo("charged k once");
			assertThat(context.getBean(Second.PaymentService.class).charge("k")).isEqualTo("refunded k");
		});
	}

	@Test
	void anExplicitWorkflowStillSharesRecordsOnPurpose() {
		this.runner.withUserConfiguration(Services.class).run((context) -> {
			assertThat(context.getBean(First.PaymentService.class).shared("k")).isEqualTo("first");
			assertThat(context.getBean(Second.PaymentService.class).shared("k")).isEqualTo("first");
		});
	}

	@Test
	void overloadsWhoseParameterTypesHaveTheSameShortNameFailTheStart() {
		this.runner.withUserConfiguration(Ambiguous.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining("default workflow '" + PREFIX + "$AmbiguousService.at(Date)'")
				.hasMessageContaining("set 'workflow' on one of them");
		});
	}

	@Test
	void aVeryLongDefaultIsShortenedAndStaysDistinct() {
		this.runner.withUserConfiguration(LongNames.class).run((context) -> {
			LongService service = context.getBean(LongService.class);
			assertThat(service.handle(null, null, null, null, null, null, null, null, null, null)).isEqualTo(10);
			assertThat(service.handle(null, null, null, null, null, null, null, null, null, null, null))
				.isEqualTo(11);
			// each overload ran under a workflow of its own (DefaultWorkflowsTest checks the names)
			assertThat(service.handle(null, null, null, null, null, null, null, null, null, null)).isEqualTo(10);
		});
	}

	static class First {

		static class PaymentService {

			private final AtomicInteger runs = new AtomicInteger();

			int runs() {
				return this.runs.get();
			}

			@Idempotent(key = "#p0")
			public String charge(String key) {
				this.runs.incrementAndGet();
				return "charged " + key + " once";
			}

			@Idempotent(key = "#p0")
			public String charge(String key, int times) {
				this.runs.incrementAndGet();
				return "charged " + key + " " + times + " times";
			}

			@Idempotent(key = "#p0", workflow = "shared")
			public String shared(String key) {
				return "first";
			}

		}

	}

	static class Second {

		static class PaymentService {

			@Idempotent(key = "#p0")
			public String charge(String key) {
				return "refunded " + key;
			}

			@Idempotent(key = "#p0", workflow = "shared")
			public String shared(String key) {
				return "second";
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		First.PaymentService firstPaymentService() {
			return new First.PaymentService();
		}

		@Bean
		Second.PaymentService secondPaymentService() {
			return new Second.PaymentService();
		}

	}

	static class AmbiguousService {

		@Idempotent(key = "#p0.time")
		public String at(java.util.Date date) {
			return "util";
		}

		@Idempotent(key = "#p0.time")
		public String at(java.sql.Date date) {
			return "sql";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Ambiguous {

		@Bean
		AmbiguousService ambiguousService() {
			return new AmbiguousService();
		}

	}

	static class AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong {

	}

	static class LongService {

		@Idempotent(key = "'k'")
		public int handle(AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a1,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a2,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a3,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a4,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a5,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a6,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a7,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a8,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a9,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a10) {
			return 10;
		}

		@Idempotent(key = "'k'")
		public int handle(AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a1,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a2,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a3,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a4,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a5,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a6,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a7,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a8,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a9,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a10,
				AVeryLongParameterTypeNameThatMakesTheDefaultWorkflowLong a11) {
			return 11;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LongNames {

		@Bean
		LongService longService() {
			return new LongService();
		}

	}

}
