package io.github.idempotency.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Starts the sample on its default profile (H2, in-process Kafka) and checks the summary
 * of the burst and the Actuator's answers over HTTP.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class SampleApplicationTest {

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@Autowired
	private PaymentSummary summary;

	@Autowired
	private PaymentRepository payments;

	@Value("${local.server.port}")
	private int port;

	@Test
	void everyPaymentIsChargedOnceAndTheActuatorShowsIt() {
		await().atMost(Duration.ofSeconds(60)).until(() -> this.summary.result().isDone());
		PaymentSummary.Result result = this.summary.result().join();
		assertThat(result.published()).isEqualTo(1000);
		assertThat(result.duplicates()).isEqualTo(250);
		assertThat(result.charged()).isEqualTo(750);
		assertThat(result.suppressed()).isEqualTo(250);
		assertThat(this.payments.findAll().stream().map(Payment::getPaymentId).distinct()).hasSize(750);

		RestClient http = RestClient.create("http://localhost:" + this.port + "/actuator");
		Map<String, Object> hits = http.get()
			.uri("/metrics/idempotency.requests?tag=outcome:hit&tag=workflow:payment")
			.retrieve()
			.body(JSON);
		assertThat(hits).extracting("measurements")
			.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
			.singleElement()
			.isEqualTo(Map.of("statistic", "COUNT", "value", 250.0));

		Map<String, Object> idempotency = http.get().uri("/idempotency").retrieve().body(JSON);
		assertThat(idempotency).containsEntry("backend", "jdbc");

		Map<String, Object> record = http.get().uri("/idempotency/payment/pay-7").retrieve().body(JSON);
		assertThat(record).containsEntry("status", "COMPLETED").containsEntry("attempt", 1);

		int missing = http.get()
			.uri("/idempotency/payment/no-such-payment")
			.exchange((request, response) -> response.getStatusCode().value());
		assertThat(missing).isEqualTo(404);

		// docs/observability.md, "Actuator": its components and their details need show-details (application.yml)
		Map<String, Object> health = http.get().uri("/health").retrieve().body(JSON);
		assertThat(health).containsEntry("status", "UP");
		assertThat(health).extracting("components.idempotency")
			.isEqualTo(Map.of("status", "UP", "details",
					Map.of("backend", "jdbc", "address", "jdbc:h2:mem:payments;DB_CLOSE_DELAY=-1")));
	}

}
