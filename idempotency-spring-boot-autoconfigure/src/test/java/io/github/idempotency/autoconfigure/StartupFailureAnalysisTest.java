package io.github.idempotency.autoconfigure;

import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.idempotency.Idempotent;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The starter's own start-up checks fail the start with Spring Boot's report, one per
 * check: each test starts a real application that fails, asks the check's analyzer for its
 * analysis, and finds that analysis in what the start printed (so the analyzer is the one
 * {@code META-INF/spring.factories} registers).
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureAnalysisTest {

	@Test
	void anUnknownBackendIsReportedWithTheValueWhereItWasSetAndTheValuesItTakes(CapturedOutput output) {
		Throwable failure = start(Store.class, "--idempotency.backend=mongo");
		FailureAnalysis analysis = analyze(new InvalidBackendFailureAnalyzer(), failure);
		assertThat(analysis.getDescription())
			.startsWith("idempotency.backend is 'mongo' (set in ")
			.contains("commandLineArgs")
			.endsWith(", which names no idempotency store.");
		assertThat(analysis.getAction()).startsWith("Set idempotency.backend to one of jdbc, r2dbc, redis, hybrid, memory, "
				+ "or remove it to have the store chosen from the application's beans");
		assertReported(output, analysis);
	}

	@Test
	void aMissingTableIsReportedWithBothWaysToCreateIt(CapturedOutput output) {
		Throwable failure = start(Store.class, "--idempotency.jdbc.initialize-schema=never",
				"--spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID());
		FailureAnalysis analysis = analyze(new JdbcTableFailureAnalyzer(), failure);
		assertThat(analysis.getDescription())
			.isEqualTo("The jdbc idempotency store's table 'idempotency_record' does not exist.");
		assertThat(analysis.getAction()).startsWith("Create it: set idempotency.jdbc.initialize-schema=always")
			.contains("run the shipped script io/github/idempotency/store/jdbc/schema-h2.sql in a Flyway or "
					+ "Liquibase migration.");
		assertReported(output, analysis);
	}

	@Test
	void aKeyExpressionThatNamesNoParameterIsReportedWithTheParameters(CapturedOutput output) {
		Throwable failure = start(WrongKey.class, "--idempotency.backend=memory");
		FailureAnalysis analysis = analyze(new InvalidIdempotentMethodFailureAnalyzer(), failure);
		assertThat(analysis.getDescription()).isEqualTo("@Idempotent on " + PaymentListener.class.getName()
				+ ".onPayment cannot work: 'key' = #message.id: #message is not a parameter of the method, so it "
				+ "would always be null.");
		assertThat(analysis.getAction()).isEqualTo("Name one of its parameters: #payment (#p0, #a0).");
		assertReported(output, analysis);
	}

	private static Throwable start(Class<?> configuration, String... args) {
		SpringApplication application = new SpringApplication(configuration);
		application.setWebApplicationType(WebApplicationType.NONE);
		Throwable failure = catchThrowable(() -> application.run(args).close());
		assertThat(failure).as("the start's failure").isNotNull();
		return failure;
	}

	private static FailureAnalysis analyze(FailureAnalyzer analyzer, Throwable failure) {
		FailureAnalysis analysis = analyzer.analyze(failure);
		assertThat(analysis).as("the analysis of " + failure).isNotNull();
		return analysis;
	}

	private static void assertReported(CapturedOutput output, FailureAnalysis analysis) {
		String separator = System.lineSeparator();
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:" + separator + separator + analysis.getDescription() + separator)
			.contains("Action:" + separator + separator + analysis.getAction() + separator);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
			IdempotencyAutoConfiguration.class })
	static class Store {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ AopAutoConfiguration.class, JacksonAutoConfiguration.class,
			IdempotencyAutoConfiguration.class })
	static class WrongKey {

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		PaymentListener paymentListener() {
			return new PaymentListener();
		}

	}

	record Payment(String id) {
	}

	static class PaymentListener {

		@Idempotent(key = "#message.id", workflow = "payment")
		public void onPayment(Payment payment) {
		}

	}

}
