package io.github.idempotency.autoconfigure.aop;

import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The idempotency advice of a {@code @Transactional} method runs inside its transaction
 * advice, or the application does not start.
 */
class TransactionAdvisorOrderTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
				"spring.datasource.generate-unique-name=false")
		.withUserConfiguration(Service.class);

	@Test
	void theDefaultOrderPutsTheIdempotencyAdviceInsideTheTransactionAdvice() {
		this.runner.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aTransactionAdvisorOfTheHighestPrecedenceIsFine() {
		this.runner.withUserConfiguration(TransactionFirst.class)
			.withPropertyValues("idempotency.aspect-order=0")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void anIdempotencyAdviceOutsideTheTransactionAdviceFailsTheStartNamingTheMethod() {
		this.runner.withPropertyValues("idempotency.aspect-order=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasMessageContaining("TransactionAdvisorOrderTest$Payments.pay")
				.hasMessageContaining("runs outside its transaction advice"));
	}

	@Configuration(proxyBeanMethods = false)
	static class Service {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	@EnableTransactionManagement(order = Ordered.HIGHEST_PRECEDENCE)
	static class TransactionFirst {

	}

	static class Payments {

		@Transactional
		@Idempotent(key = "#key")
		public String pay(String key) {
			return key;
		}

	}

}
