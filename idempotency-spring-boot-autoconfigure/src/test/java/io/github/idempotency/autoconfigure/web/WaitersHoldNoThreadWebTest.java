package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On WebFlux with a blocking store (jdbc on H2), a retry that waits for a run in progress
 * holds no thread: with one scheduler thread, 50 retries of one slow run wait on timers, the
 * run's completion is not queued behind them, and every one of them gets its answer. (A
 * non-blocking store holds no thread at all.)
 */
@SpringBootTest(classes = ReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, "idempotency.backend=jdbc",
				"idempotency.jdbc.initialize-schema=always",
				"spring.datasource.url=jdbc:h2:mem:waiters-hold-no-thread;DB_CLOSE_DELAY=-1",
				"idempotency.web.reactive.scheduler-threads=1",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class WaitersHoldNoThreadWebTest {

	@LocalServerPort
	int port;

	@Autowired
	PaymentsProbe payments;

	@Autowired
	ReactiveWebTestApplication.StoreCallThreads store;

	@Test
	void fiftyRetriesOfOneSlowRunOnOneSchedulerThreadAreAllAnswered() throws Exception {
		HttpClients http = new HttpClients(this.port);
		String body = "{\"account\":\"patient\",\"amount\":3}";
		this.payments.hold();
		CompletableFuture<HttpResponse<byte[]>> first = http
			.sendAsync(http.request("/settlements", body, "Idempotency-Key", "k-patient"));
		assertThat(this.payments.awaitEntered()).isTrue();
		int before = this.store.check().claims();
		List<CompletableFuture<HttpResponse<byte[]>>> retries = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			retries.add(http.sendAsync(http.request("/settlements", body, "Idempotency-Key", "k-patient")));
		}
		// every retry has found the run in progress (and waits) before it ends
		Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> this.store.check().claims() >= before + 50);
		this.payments.release();
		assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		for (CompletableFuture<HttpResponse<byte[]>> retry : retries) {
			HttpResponse<byte[]> answer = retry.get(60, TimeUnit.SECONDS);
			assertThat(answer.statusCode()).isEqualTo(200);
			assertThat(answer.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(answer.body()).isEqualTo(first.join().body());
		}
		assertThat(this.payments.executions("patient")).isOne();
	}

}
