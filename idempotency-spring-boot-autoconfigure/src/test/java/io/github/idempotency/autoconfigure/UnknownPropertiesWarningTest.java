package io.github.idempotency.autoconfigure;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@code idempotency.*} property that no idempotency property binds is a WARN at start
 * naming the closest one; every form Spring Boot binds a known property from, and a list's
 * elements, is silent. The environment variables are this test's own (the process's are
 * replaced), so what the machine exports changes nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesWarningTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void aTypoIsAWarningNamingTheClosestProperty(CapturedOutput output) {
		this.runner.withPropertyValues("idempotency.backnd=jdbc", "idempotency.lease-tll=10s",
				"idempotency.jdbc.initialise-schema=always")
			.withInitializer((context) -> environmentVariables(context.getEnvironment(),
					Map.of("IDEMPOTENCY_WAIT_TIMOUT", "5s")))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Unknown property 'idempotency.backnd' (\"idempotency.backnd\" from "
						+ "property source \"test\") is ignored: no idempotency property has that name; did you "
						+ "mean 'idempotency.backend'?")
					.contains("Unknown property 'idempotency.lease-tll'")
					.contains("did you mean 'idempotency.lease-ttl'?")
					.contains("Unknown property 'idempotency.jdbc.initialise-schema'")
					.contains("did you mean 'idempotency.jdbc.initialize-schema'?")
					.contains("(\"IDEMPOTENCY_WAIT_TIMOUT\" from property source \"systemEnvironment\")")
					.contains("did you mean 'idempotency.wait-timeout'?");
				assertThat(output.getOut().lines().filter((line) -> line.contains("Unknown property"))).hasSize(4);
			});
	}

	@Test
	void everyFormOfAKnownPropertyAndAListsElementsAreSilent(CapturedOutput output) {
		this.runner.withPropertyValues("idempotency.leaseTtl=40s", "idempotency.max_key_length=100",
				"idempotency.jdbc.table-name=records", "idempotency.on-in-progress=reject",
				"idempotency.web.stored-headers[0]=Location", "idempotency.web.storedHeaders[1]=ETag")
			.withInitializer((context) -> environmentVariables(context.getEnvironment(),
					Map.of("IDEMPOTENCY_RETENTION", "1d", "IDEMPOTENCY_WAITTIMEOUT", "5s",
							"IDEMPOTENCY_LEASE_RENEWAL_INTERVAL", "10s", "IDEMPOTENCY_WEB_RETRYAFTER", "2s",
							"IDEMPOTENCY_WEB_STOREDHEADERS_2_", "Content-Type",
							"IDEMPOTENCY_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1/test")))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				IdempotencyProperties properties = context.getBean(IdempotencyProperties.class);
				// each form is one Spring Boot binds
				assertThat(properties.getLeaseTtl()).isEqualTo(Duration.ofSeconds(40));
				assertThat(properties.getMaxKeyLength()).isEqualTo(100);
				assertThat(properties.getWaitTimeout()).isEqualTo(Duration.ofSeconds(5));
				assertThat(properties.getLeaseRenewalInterval()).isEqualTo(Duration.ofSeconds(10));
				assertThat(output).doesNotContain("Unknown property");
			});
	}

	private static void environmentVariables(ConfigurableEnvironment environment,
			Map<String, Object> variables) {
		environment.getPropertySources()
			.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
					StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
	}

}
