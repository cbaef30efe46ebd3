package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store that cannot be reached fails closed: 503 with {@code Retry-After}, as a problem,
 * and the handler method does not run.
 */
@SpringBootTest(classes = { WebTestApplication.class, StoreUnavailableWebTest.Unreachable.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.web.retry-after=5s", PrincipalScopeTest.EXCLUDE })
class StoreUnavailableWebTest {

	@LocalServerPort
	int port;

	@Autowired
	PaymentsProbe payments;

	@Test
	void anUnreachableStoreIsServiceUnavailableWithRetryAfter() {
		HttpResponse<byte[]> response = new HttpClients(this.port).post("/payments",
				"{\"account\":\"unreachable\",\"amount\":1}", "Idempotency-Key", "k-unreachable");
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After")).hasValue("5");
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("\"status\":503")
			.doesNotContain("connection refused");
		assertThat(this.payments.executions("unreachable")).isZero();
	}

	@Configuration(proxyBeanMethods = false)
	static class Unreachable {

		@Bean
		IdempotencyStore unreachableStore() {
			return new UnreachableIdempotencyStore("memory");
		}

	}

}
