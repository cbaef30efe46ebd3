package io.github.idempotency.actuate;

import java.security.Principal;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.actuate.IdempotencyEndpoint.RecordDescriptor;
import io.github.idempotency.actuate.IdempotencyEndpoint.RecordNotFoundDescriptor;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.invoke.convert.ConversionServiceParameterValueMapper;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.WebEndpointHttpMethod;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpointDiscoverer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A record's stored values (response, error message, recovery point) are masked unless
 * {@code management.endpoint.idempotency.show-values} shows them, as for {@code env}.
 */
class IdempotencyEndpointShowValuesTest {

	private static final String RECEIPT = "card 4111-1111 of Ada Lovelace";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyEndpointAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory", "management.endpoints.web.exposure.include=idempotency");

	@Test
	void storedValuesAreMaskedByDefault() {
		this.runner.run((context) -> {
			store(context);
			RecordDescriptor completed = endpoint(context).record("payment", "p-1");
			assertThat(completed.response()).isEqualTo("******");
			assertThat(completed.recoveryPoint()).isEqualTo("******");
			assertThat(completed.responseSize()).isEqualTo(("{'details':'" + RECEIPT + "'}").length());
			assertThat(completed.owner()).isNotEqualTo("******");
			RecordDescriptor failed = endpoint(context).record("payment", "p-2");
			assertThat(failed.errorType()).isEqualTo(IllegalArgumentException.class.getName());
			assertThat(failed.errorMessage()).isEqualTo("******");
			assertThat(failed.response()).isNull();
		});
	}

	@Test
	void alwaysShowsTheStoredValues() {
		this.runner.withPropertyValues("management.endpoint.idempotency.show-values=always").run((context) -> {
			store(context);
			RecordDescriptor completed = endpoint(context).record("payment", "p-1");
			assertThat(completed.response()).contains("Ada Lovelace");
			assertThat(completed.recoveryPoint()).isEqualTo("card charged for Ada Lovelace");
			assertThat(endpoint(context).record("payment", "p-2").errorMessage())
				.isEqualTo("card of Ada Lovelace declined");
		});
	}

	@Test
	void whenAuthorizedShowsThemOutsideHttpAsSpringBootDoesForEnv() {
		this.runner.withPropertyValues("management.endpoint.idempotency.show-values=when-authorized")
			.run((context) -> {
				store(context);
				assertThat(endpoint(context).record("payment", "p-1").response()).contains("Ada Lovelace");
			});
	}

	@Test
	void overHttpWhenAuthorizedShowsThemToAnAuthenticatedCaller() {
		this.runner.withPropertyValues("management.endpoint.idempotency.show-values=when-authorized")
			.run((context) -> {
				store(context);
				assertThat(readOverHttp(context, SecurityContext.NONE).response()).isEqualTo("******");
				assertThat(readOverHttp(context, caller("ops")).response()).contains("Ada Lovelace");
			});
	}

	@Test
	void overHttpWhenAuthorizedWithRolesShowsThemOnlyToThoseRoles() {
		this.runner
			.withPropertyValues("management.endpoint.idempotency.show-values=when-authorized",
					"management.endpoint.idempotency.roles=payments-admin")
			.run((context) -> {
				store(context);
				assertThat(readOverHttp(context, caller("ops")).response()).isEqualTo("******");
				assertThat(readOverHttp(context, caller("ops", "payments-admin")).response())
					.contains("Ada Lovelace");
				assertThat(readOverHttp(context, caller("ops", "payments-admin")).errorMessage()).isNull();
			});
	}

	@Test
	void overHttpNeverHidesThemFromEveryone() {
		this.runner.withPropertyValues("management.endpoint.idempotency.roles=payments-admin").run((context) -> {
			store(context);
			assertThat(readOverHttp(context, caller("ops", "payments-admin")).response()).isEqualTo("******");
		});
	}

	@Test
	void overHttpAMissingRecordIsNotFoundSayingWhatWasLookedUp() {
		this.runner.run((context) -> {
			WebEndpointResponse<?> response = invokeOverHttp(context, SecurityContext.NONE, "payment", "absent");
			assertThat(response.getStatus()).isEqualTo(404);
			assertThat(response.getBody()).isInstanceOfSatisfying(RecordNotFoundDescriptor.class,
					(body) -> assertThat(body.lookedUp()).containsExactly("absent", "-|absent"));
		});
	}

	@Test
	void theWebExtensionIsOnlyCreatedForHttp() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(IdempotencyEndpointWebExtension.class));
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=health", "spring.jmx.enabled=true",
					"management.endpoints.jmx.exposure.include=idempotency")
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEndpoint.class)
				.doesNotHaveBean(IdempotencyEndpointWebExtension.class));
	}

	private static void store(AssertableApplicationContext context) {
		IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
		template.execute(IdempotentRequest.of("payment", "p-1"), Receipt.class, () -> {
			IdempotencyContext.current().saveRecoveryPoint("card charged for Ada Lovelace");
			return new Receipt(RECEIPT);
		});
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> template.execute(
					IdempotentRequest.of("payment", "p-2").withRecordFailureFor(IllegalArgumentException.class),
					Receipt.class, () -> {
						throw new IllegalArgumentException("card of Ada Lovelace declined");
					}));
		assertThatExceptionOfType(IdempotentFailureReplayedException.class).isThrownBy(() -> template
			.execute(IdempotentRequest.of("payment", "p-2"), Receipt.class, () -> new Receipt("never")));
	}

	private static IdempotencyEndpoint endpoint(AssertableApplicationContext context) {
		return context.getBean(IdempotencyEndpoint.class);
	}

	private static RecordDescriptor readOverHttp(AssertableApplicationContext context, SecurityContext caller) {
		return readOverHttp(context, caller, "payment", "p-1");
	}

	/**
	 * Invokes the {@code GET /actuator/idempotency/{workflow}/{key}} operation as Spring
	 * Boot's web endpoint discovery builds it: the web extension's, with the caller's
	 * security context.
	 */
	private static RecordDescriptor readOverHttp(AssertableApplicationContext context, SecurityContext caller,
			String workflow, String key) {
		WebEndpointResponse<?> response = invokeOverHttp(context, caller, workflow, key);
		assertThat(response.getStatus()).isEqualTo(200);
		return (RecordDescriptor) response.getBody();
	}

	private static WebEndpointResponse<?> invokeOverHttp(AssertableApplicationContext context, SecurityContext caller,
			String workflow, String key) {
		WebEndpointDiscoverer discoverer = new WebEndpointDiscoverer(context,
				new ConversionServiceParameterValueMapper(), EndpointMediaTypes.DEFAULT, List.of(), List.of(),
				List.of(), List.of(), List.of());
		ExposableWebEndpoint endpoint = discoverer.getEndpoints()
			.stream()
			.filter((candidate) -> candidate.getEndpointId().toString().equals("idempotency"))
			.findFirst()
			.orElseThrow();
		WebOperation read = endpoint.getOperations()
			.stream()
			.filter((operation) -> operation.getRequestPredicate().getHttpMethod() == WebEndpointHttpMethod.GET
					&& operation.getRequestPredicate().getPath().endsWith("{workflow}/{key}"))
			.findFirst()
			.orElseThrow();
		return (WebEndpointResponse<?>) read
			.invoke(new InvocationContext(caller, Map.of("workflow", workflow, "key", key)));
	}

	private static SecurityContext caller(String name, String... roles) {
		Set<String> granted = Set.of(roles);
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return () -> name;
			}

			@Override
			public boolean isUserInRole(String role) {
				return granted.contains(role);
			}

		};
	}

	record Receipt(String details) {
	}

}
