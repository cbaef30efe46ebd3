package io.github.idempotency.sample.webflux;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
// a generous bound for a first request on a busy machine, never reached otherwise
@AutoConfigureWebTestClient(timeout = "60s")
class PaymentControllerTest {

	@Autowired
	private WebTestClient client;

	@Autowired
	private IdempotencyStore store;

	@Autowired
	private ReactiveIdempotencyStore reactiveStore;

	@Autowired
	private PaymentService payments;

	@Test
	void theStoreIsTheR2dbcOne() {
		assertThat(this.store.backend()).isEqualTo("r2dbc");
	}

	@Test
	void aRetriedRequestGetsTheFirstAnswerAndChargesOnce() {
		Receipt first = pay("key-1", "p-1", 1250).expectStatus()
			.isCreated()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody(Receipt.class)
			.returnResult()
			.getResponseBody();

		Receipt second = pay("key-1", "p-1", 1250).expectStatus()
			.isCreated()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectHeader()
			.valueEquals("Location", "/payments/" + first.id())
			.expectBody(Receipt.class)
			.returnResult()
			.getResponseBody();

		assertThat(second).isEqualTo(first);
		assertThat(this.payments.count("p-1").block()).isEqualTo(1);
		assertThat(this.reactiveStore.find(new RecordId("payment-charge", "p-1")).block()).isNotNull();
	}

	@Test
	void aChargeThatFailsLeavesNeitherItsRowNorItsRecord() {
		pay("key-2", "p-2", 0).expectStatus().isBadRequest();

		assertThat(this.payments.count("p-2").block()).isZero();
		assertThat(this.reactiveStore.find(new RecordId("payment-charge", "p-2")).block()).isNull();

		// the payment id was never charged: a valid charge of it (a new request) goes through
		pay("key-3", "p-2", 500).expectStatus().isCreated().expectHeader().doesNotExist("Idempotent-Replayed");
		assertThat(this.payments.count("p-2").block()).isEqualTo(1);
	}

	@Test
	void theChargeIsIdempotentByPaymentIdAcrossKeys() {
		Receipt first = pay("key-4", "p-4", 700).expectBody(Receipt.class).returnResult().getResponseBody();
		// another key, the same payment id: the charge's record answers, no second row
		Receipt second = pay("key-5", "p-4", 700).expectStatus()
			.isCreated()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody(Receipt.class)
			.returnResult()
			.getResponseBody();

		assertThat(second).isEqualTo(first);
		assertThat(this.payments.count("p-4").block()).isEqualTo(1);
	}

	private WebTestClient.ResponseSpec pay(String key, String paymentId, long amountCents) {
		return this.client.post()
			.uri("/payments")
			.header("Idempotency-Key", key)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(new Order(paymentId, amountCents))
			.exchange();
	}

}
