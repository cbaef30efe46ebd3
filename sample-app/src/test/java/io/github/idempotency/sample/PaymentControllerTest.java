package io.github.idempotency.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /payments} with an {@code Idempotency-Key}: a retry is answered with the
 * first response and charges nothing; a missing key and a reused key are problems. No
 * burst of events and a database of its own, so that the charges counted are this test's.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "sample.events=0", "sample.duplicates=0",
		"spring.datasource.url=jdbc:h2:mem:http-payments;DB_CLOSE_DELAY=-1" })
class PaymentControllerTest {

	private final HttpClient client = HttpClient.newHttpClient();

	@Autowired
	private PaymentRepository payments;

	@Value("${local.server.port}")
	private int port;

	private HttpResponse<String> pay(String json, String... headers) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/payments"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json));
		if (headers.length > 0) {
			request.headers(headers);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void aRetryGetsTheFirstResponseAndChargesOnce() throws Exception {
		String order = "{\"paymentId\":\"http-1\",\"amountCents\":1250}";
		HttpResponse<String> first = pay(order, "Idempotency-Key", "8e03978e-40d5-43e8-bc93-6894a57f9324");
		HttpResponse<String> retry = pay(order, "Idempotency-Key", "8e03978e-40d5-43e8-bc93-6894a57f9324");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.findAll().stream().filter((payment) -> payment.getPaymentId().equals("http-1")))
			.hasSize(1);

		HttpResponse<String> reused = pay("{\"paymentId\":\"http-1\",\"amountCents\":9999}", "Idempotency-Key",
				"8e03978e-40d5-43e8-bc93-6894a57f9324");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
	}

	private HttpResponse<String> payMine(String user, String json, String key)
			throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/my/payments"))
			.header("Content-Type", "application/json")
			.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8)))
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void twoCustomersSendingTheSameKeyEachGetTheirOwnCharge() throws Exception {
		String key = "\"0d9c1b4e-3f7a-4c55-9e0b-2b7f6a1c8d42\"";
		HttpResponse<String> alice = payMine("alice", "{\"paymentId\":\"http-alice\",\"amountCents\":500}", key);
		HttpResponse<String> bob = payMine("bob", "{\"paymentId\":\"http-bob\",\"amountCents\":500}", key);
		HttpResponse<String> aliceRetry = payMine("alice", "{\"paymentId\":\"http-alice\",\"amountCents\":500}",
				key);
		assertThat(alice.statusCode()).isEqualTo(201);
		assertThat(alice.body()).contains("\"customer\":\"alice\"");
		assertThat(bob.statusCode()).isEqualTo(201);
		assertThat(bob.body()).contains("\"customer\":\"bob\"");
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(aliceRetry.body()).isEqualTo(alice.body());
		assertThat(aliceRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.findAll().stream().filter((payment) -> payment.getPaymentId().startsWith("http-")
				&& !payment.getPaymentId().matches("http-\\d"))).hasSize(2);
	}

	@Test
	void theSecuredVariantNeedsAUser() throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/my/payments"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", "anonymous")
			.POST(HttpRequest.BodyPublishers.ofString("{\"paymentId\":\"http-anon\",\"amountCents\":1}"))
			.build();
		assertThat(this.client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(401);
	}

	@Test
	void aPaymentWithoutAKeyIsABadRequest() throws Exception {
		HttpResponse<String> response = pay("{\"paymentId\":\"http-2\",\"amountCents\":1}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("Idempotency-Key");
		assertThat(this.payments.findAll().stream().filter((payment) -> payment.getPaymentId().equals("http-2")))
			.isEmpty();
	}

}
