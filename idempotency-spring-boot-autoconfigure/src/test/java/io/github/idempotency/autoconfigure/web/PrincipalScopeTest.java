package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys are scoped by the authenticated principal without any configuration: Alice and Bob,
 * two users of Spring Security over basic auth, send the same key and each gets their own
 * response. Opting out is explicit.
 */
class PrincipalScopeTest {

	static final String EXCLUDE = "spring.autoconfigure.exclude="
			+ "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
			+ "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
			+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration";

	static String payment(long amount) {
		return "{\"account\":\"me\",\"amount\":" + amount + "}";
	}

	static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

	@Nested
	@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "idempotency.backend=memory", EXCLUDE })
	class ByDefault extends ScopedByDefault {

	}

	@Nested
	@SpringBootTest(classes = ReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { ReactiveWebTestApplication.REACTIVE, "idempotency.backend=memory", EXCLUDE })
	class OnWebFluxByDefault extends ScopedByDefault {

	}

	@Nested
	@SpringBootTest(
			classes = { PlainReactiveWebTestApplication.class, BlockingExecution.class },
			webEnvironment = WebEnvironment.RANDOM_PORT, properties = { ReactiveWebTestApplication.REACTIVE,
					PlainReactiveWebTestApplication.PROPAGATION, "idempotency.backend=memory", EXCLUDE })
	@ExtendWith(AutomaticContextPropagation.class)
	class OnWebFluxWithPlainResultsByDefault extends ScopedByDefault {

	}

	@Nested
	@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "idempotency.backend=memory", "idempotency.web.principal-scope=false", EXCLUDE })
	class OptedOut extends Unscoped {

	}

	@Nested
	@SpringBootTest(classes = ReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { ReactiveWebTestApplication.REACTIVE, "idempotency.backend=memory",
					"idempotency.web.principal-scope=false", EXCLUDE })
	class OnWebFluxOptedOut extends Unscoped {

	}

	/** The same behaviour, on either stack. */
	abstract static class ScopedByDefault {

		@LocalServerPort
		int port;

		@Autowired
		PaymentsProbe payments;

		@Test
		void aliceAndBobSendingTheSameKeyEachGetTheirOwnResponse() {
			HttpClients http = new HttpClients(this.port);
			HttpResponse<byte[]> alice = http.post("/me/payments", payment(7), concat(
					HttpClients.basic("alice", "alice-pw"), "Idempotency-Key", "k-shared"));
			HttpResponse<byte[]> bob = http.post("/me/payments", payment(7), concat(
					HttpClients.basic("bob", "bob-pw"), "Idempotency-Key", "k-shared"));
			HttpResponse<byte[]> aliceAgain = http.post("/me/payments", payment(7), concat(
					HttpClients.basic("alice", "alice-pw"), "Idempotency-Key", "k-shared"));
			assertThat(alice.statusCode()).isEqualTo(201);
			assertThat(text(alice)).contains("\"account\":\"alice\"");
			assertThat(bob.statusCode()).isEqualTo(201);
			assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(text(bob)).contains("\"account\":\"bob\"").doesNotContain("alice");
			assertThat(aliceAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(aliceAgain.body()).isEqualTo(alice.body());
			assertThat(this.payments.executions("alice")).isOne();
			assertThat(this.payments.executions("bob")).isOne();
		}

		@Test
		void theCallerIsTheOneTheHandlerSeesAfterTheApplicationsOwnFilters() {
			HttpClients http = new HttpClients(this.port);
			HttpResponse<byte[]> alice = http.post("/api-key/payments", payment(9), "X-Api-Key", "carol-key",
					"Idempotency-Key", "k-api");
			HttpResponse<byte[]> bob = http.post("/api-key/payments", payment(9), "X-Api-Key", "dave-key",
					"Idempotency-Key", "k-api");
			assertThat(text(alice)).contains("\"account\":\"carol\"");
			// dave's request with carol's key is dave's own: never carol's stored receipt
			assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(text(bob)).contains("\"account\":\"dave\"").doesNotContain("carol");
			assertThat(this.payments.executions("carol")).isOne();
			assertThat(this.payments.executions("dave")).isOne();
		}

		@Test
		void anonymousRequestsShareOneScopeApartFromTheUsers() {
			HttpClients http = new HttpClients(this.port);
			HttpResponse<byte[]> anonymous = http.post("/payments",
					"{\"account\":\"anonymous\",\"amount\":1}", "Idempotency-Key", "k-anonymous");
			HttpResponse<byte[]> anonymousAgain = http.post("/payments",
					"{\"account\":\"anonymous\",\"amount\":1}", "Idempotency-Key", "k-anonymous");
			HttpResponse<byte[]> alice = http.post("/payments", "{\"account\":\"anonymous\",\"amount\":1}",
					concat(HttpClients.basic("alice", "alice-pw"), "Idempotency-Key", "k-anonymous"));
			assertThat(anonymousAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(alice.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(this.payments.executions("anonymous")).isEqualTo(2);
		}

	}

	/** Opted out, on either stack. */
	abstract static class Unscoped {

		@LocalServerPort
		int port;

		@Test
		void bobMeetsAlicesKey() {
			HttpClients http = new HttpClients(this.port);
			HttpResponse<byte[]> alice = http.post("/me/payments", payment(7), concat(
					HttpClients.basic("alice", "alice-pw"), "Idempotency-Key", "k-unscoped"));
			HttpResponse<byte[]> bob = http.post("/me/payments", payment(7), concat(
					HttpClients.basic("bob", "bob-pw"), "Idempotency-Key", "k-unscoped"));
			assertThat(bob.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(bob.body()).isEqualTo(alice.body());
		}

	}

	static String[] concat(String[] first, String... more) {
		String[] all = new String[first.length + more.length];
		System.arraycopy(first, 0, all, 0, first.length);
		System.arraycopy(more, 0, all, first.length, more.length);
		return all;
	}

}
