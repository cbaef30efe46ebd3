package io.github.idempotency.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Over real HTTP: a handler method's key, stored with its caller's scope, is found by the
 * key the caller sent ({@code -|7b4c} for an anonymous caller without {@code scope},
 * {@code 5:alice|7b4c} for alice with {@code ?scope=alice}), deleted the same way, and a
 * key not found answers 404 saying what was looked up.
 */
@SpringBootTest(classes = IdempotencyEndpointHttpKeysTest.Application.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=memory", "management.endpoints.web.exposure.include=idempotency",
				"spring.autoconfigure.exclude="
						+ "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class IdempotencyEndpointHttpKeysTest {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	int port;

	@Test
	void anAnonymousCallersKeyIsFoundAsItWasSent() {
		assertThat(pay("k-anonymous", null).statusCode()).isEqualTo(200);
		HttpResponse<String> record = send("GET", "/actuator/idempotency/payment-api/k-anonymous");
		assertThat(record.statusCode()).isEqualTo(200);
		assertThat(record.body()).contains("\"key\":\"-|k-anonymous\"").contains("\"status\":\"COMPLETED\"");
	}

	@Test
	void anAuthenticatedCallersKeyIsFoundWithItsScope() {
		assertThat(pay("7b4c", "alice").statusCode()).isEqualTo(200);
		HttpResponse<String> record = send("GET", "/actuator/idempotency/payment-api/7b4c?scope=alice");
		assertThat(record.statusCode()).isEqualTo(200);
		assertThat(record.body()).contains("\"key\":\"5:alice|7b4c\"");
		// without the scope: the key as sent and the anonymous caller's, neither stored
		HttpResponse<String> unscoped = send("GET", "/actuator/idempotency/payment-api/7b4c");
		assertThat(unscoped.statusCode()).isEqualTo(404);
		assertThat(unscoped.body()).contains("\"lookedUp\":[\"7b4c\",\"-|7b4c\"]")
			.contains("name an authenticated caller with ?scope=<name>");
	}

	@Test
	void aKeyNotFoundAnswersWhatWasLookedUp() {
		HttpResponse<String> missing = send("GET", "/actuator/idempotency/payment-api/nope?scope=bob");
		assertThat(missing.statusCode()).isEqualTo(404);
		assertThat(missing.body()).contains("\"workflow\":\"payment-api\"")
			.contains("\"key\":\"nope\"")
			.contains("\"scope\":\"bob\"")
			.contains("\"lookedUp\":[\"3:bob|nope\"]")
			.contains("No record of workflow 'payment-api' under the key 3:bob|nope.");
	}

	@Test
	void aScopedKeyIsDeletedWithItsScopeAndRunsAgain() {
		String first = pay("d-1", "alice").body();
		assertThat(pay("d-1", "alice").body()).as("a replay").isEqualTo(first);
		HttpResponse<String> deleted = send("DELETE", "/actuator/idempotency/payment-api/d-1?scope=alice");
		assertThat(deleted.statusCode()).isEqualTo(200);
		assertThat(deleted.body()).contains("\"key\":\"5:alice|d-1\"").contains("\"deleted\":true");
		assertThat(pay("d-1", "alice").body()).as("a new charge").isNotEqualTo(first);
	}

	private HttpResponse<String> pay(String key, @Nullable String user) {
		HttpRequest.Builder request = request("/payments").header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"amount\":1250}"));
		if (user != null) {
			request.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8)));
		}
		return send(request.build());
	}

	private HttpResponse<String> send(String method, String path) {
		return send(request(path).method(method, HttpRequest.BodyPublishers.noBody()).build());
	}

	private HttpRequest.Builder request(String path) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.header("Accept", "application/json");
	}

	private HttpResponse<String> send(HttpRequest request) {
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

		private int charges;

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@Bean
		UserDetailsService users() {
			return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-pw").build());
		}

		@Bean
		Payments payments() {
			return new Payments(this);
		}

		synchronized int charge() {
			return ++this.charges;
		}

	}

	@RestController
	static class Payments {

		private final Application application;

		Payments(Application application) {
			this.application = application;
		}

		@PostMapping("/payments")
		@Idempotent(workflow = "payment-api")
		public Receipt pay(@RequestBody Payment payment) {
			return new Receipt(payment.amount(), this.application.charge());
		}

	}

	record Payment(int amount) {
	}

	record Receipt(int amount, int charge) {
	}

}
