package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import io.github.idempotency.MissingIdempotencyKeyException;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's own {@code @ControllerAdvice} answers the idempotency exceptions it
 * handles instead of the starter's problem details.
 */
@SpringBootTest(classes = { WebTestApplication.class, WebIdempotencyAdviceOverrideTest.OwnAdvice.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=memory",
				"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class WebIdempotencyAdviceOverrideTest {

	@LocalServerPort
	int port;

	@Test
	void anApplicationsAdviceWins() {
		HttpResponse<byte[]> response = new HttpClients(this.port).post("/payments",
				"{\"account\":\"own\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(428);
		assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo("own answer");
	}

	@ControllerAdvice
	static class OwnAdvice {

		@ExceptionHandler(MissingIdempotencyKeyException.class)
		ResponseEntity<String> missing(MissingIdempotencyKeyException ex) {
			return ResponseEntity.status(HttpStatus.PRECONDITION_REQUIRED).body("own answer");
		}

	}

}
