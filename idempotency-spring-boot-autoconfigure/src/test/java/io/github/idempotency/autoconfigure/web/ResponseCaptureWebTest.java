package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On Spring MVC, what is stored is what the client received, whoever wrote it: a handler
 * that writes the response itself, a status set on the response beside a returned body.
 * On the memory backend; subclasses run it on PostgreSQL and Redis.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=memory", PrincipalScopeTest.EXCLUDE })
class ResponseCaptureWebTest {

	@LocalServerPort
	int port;

	@Autowired
	PaymentsProbe payments;

	private HttpResponse<byte[]> post(String path, String account) {
		return new HttpClients(this.port).post(path, "{\"account\":\"" + account + "\",\"amount\":5}",
				"Idempotency-Key", "k-" + account);
	}

	@Test
	void aHandlerThatWritesTheResponseItselfIsReplayedByteForByte() {
		HttpResponse<byte[]> first = post("/receipts", "writer");
		HttpResponse<byte[]> replay = post("/receipts", "writer");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(new String(first.body(), StandardCharsets.UTF_8)).startsWith("receipt pay-");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.executions("writer")).isOne();
	}

	@Test
	void aStatusSetOnTheResponseBesideAReturnedBodyIsReplayed() {
		HttpResponse<byte[]> first = post("/acceptances", "accepted");
		HttpResponse<byte[]> replay = post("/acceptances", "accepted");
		assertThat(first.statusCode()).isEqualTo(202);
		assertThat(replay.statusCode()).isEqualTo(202);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(this.payments.executions("accepted")).isOne();
	}

}
