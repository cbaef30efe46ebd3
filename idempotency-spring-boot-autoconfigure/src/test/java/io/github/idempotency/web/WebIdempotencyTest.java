package io.github.idempotency.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.IdempotencyStore;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @Idempotent} handler methods on a real server, through a real HTTP client, on the
 * memory backend.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=memory", "idempotency.web.principal=#request.getHeader('X-User')",
				"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class WebIdempotencyTest {

	@LocalServerPort
	int port;

	@Autowired
	WebTestApplication.Payments payments;

	@Autowired
	IdempotencyStore store;

	/**
	 * The backend this class runs on.
	 * @return the backend's name
	 */
	protected String backend() {
		return "memory";
	}

	private HttpClients http() {
		return new HttpClients(this.port);
	}

	private static String payment(String account, long amount) {
		return "{\"account\":\"" + account + "\",\"amount\":" + amount + "}";
	}

	private static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

	@Test
	void runsOnItsBackend() {
		assertThat(this.store.backend()).isEqualTo(backend());
	}

	@Test
	void aReplayIsTheFirstResponseByteForByteMarkedAsReplayed() {
		HttpResponse<byte[]> first = http().post("/payments", payment("replay", 100), "Idempotency-Key", "k-replay");
		HttpResponse<byte[]> second = http().post("/payments", payment("replay", 100), "Idempotency-Key", "k-replay");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Location")).hasValueSatisfying((location) -> assertThat(location)
			.startsWith("/payments/pay-"));
		assertThat(first.headers().firstValue("ETag")).isPresent();
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(second.statusCode()).isEqualTo(first.statusCode());
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(HttpClients.headers(second, "Idempotent-Replayed")).isEqualTo(HttpClients.headers(first));
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.executions("replay")).isOne();
	}

	@Test
	void aMissingKeyIsABadRequestProblem() {
		HttpResponse<byte[]> response = http().post("/payments", payment("missing", 1));
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(response)).contains("\"status\":400").contains("Idempotency-Key");
		assertThat(this.payments.executions("missing")).isZero();
	}

	@Test
	void aTooLongKeyIsABadRequestProblem() {
		HttpResponse<byte[]> response = http().post("/payments", payment("long", 1), "Idempotency-Key", "k".repeat(300));
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(text(response)).contains("\"status\":400");
		assertThat(this.payments.executions("long")).isZero();
	}

	@Test
	void aKeyReusedWithAnotherBodyIsUnprocessable() {
		assertThat(http().post("/payments", payment("reused", 100), "Idempotency-Key", "k-reused").statusCode())
			.isEqualTo(201);
		HttpResponse<byte[]> response = http().post("/payments", payment("reused", 999), "Idempotency-Key",
				"k-reused");
		assertThat(response.statusCode()).isEqualTo(422);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(response)).contains("\"status\":422");
		assertThat(this.payments.executions("reused")).isOne();
	}

	@Test
	void theSameKeyInProgressIsAConflictWithRetryAfter() throws Exception {
		this.payments.hold();
		HttpClients http = http();
		var first = http.sendAsync(http.request("/slow", payment("slow", 1), "Idempotency-Key", "k-slow"));
		try {
			assertThat(this.payments.awaitEntered()).isTrue();
			HttpResponse<byte[]> conflict = http.post("/slow", payment("slow", 1), "Idempotency-Key", "k-slow");
			assertThat(conflict.statusCode()).isEqualTo(409);
			assertThat(conflict.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(text(conflict)).contains("\"status\":409");
		}
		finally {
			this.payments.release();
		}
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		HttpResponse<byte[]> replay = http.post("/slow", payment("slow", 1), "Idempotency-Key", "k-slow");
		assertThat(replay.statusCode()).isEqualTo(200);
		assertThat(this.payments.executions("slow")).isOne();
	}

	@Test
	void aPermanentFailureIsReplayedWithItsResponseStatus() {
		HttpResponse<byte[]> first = http().post("/declines", payment("declined", 1), "Idempotency-Key", "k-declined");
		assertThat(first.statusCode()).isEqualTo(402);
		HttpResponse<byte[]> second = http().post("/declines", payment("declined", 1), "Idempotency-Key",
				"k-declined");
		assertThat(second.statusCode()).isEqualTo(402);
		assertThat(second.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(text(second)).contains("\"status\":402").doesNotContain("card declined");
		assertThat(this.payments.executions("declined")).isOne();
	}

	@Test
	void aPermanentErrorResponseFailureIsReplayedWithItsStatus() {
		HttpResponse<byte[]> first = http().post("/declines", payment("gone", -1), "Idempotency-Key", "k-gone");
		assertThat(first.statusCode()).isEqualTo(410);
		HttpResponse<byte[]> second = http().post("/declines", payment("gone", -1), "Idempotency-Key", "k-gone");
		assertThat(second.statusCode()).isEqualTo(410);
		assertThat(text(second)).contains("\"status\":410");
		assertThat(this.payments.executions("gone")).isOne();
	}

	@Test
	void aPlainBodyIsReplayedWithItsResponseStatusAndStoredHeaders() {
		HttpResponse<byte[]> first = http().post("/orders", payment("order", 5), "Idempotency-Key", "k-order");
		HttpResponse<byte[]> second = http().post("/orders", payment("order", 5), "Idempotency-Key", "k-order");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Location")).isPresent();
		assertThat(second.statusCode()).isEqualTo(201);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(HttpClients.headers(second, "Idempotent-Replayed")).isEqualTo(HttpClients.headers(first));
		assertThat(this.payments.executions("order")).isOne();
	}

	@Test
	void aVoidHandlerIsReplayedWithItsResponseStatus() {
		HttpResponse<byte[]> first = http().post("/pings", payment("ping", 5), "Idempotency-Key", "k-ping");
		HttpResponse<byte[]> second = http().post("/pings", payment("ping", 5), "Idempotency-Key", "k-ping");
		assertThat(first.statusCode()).isEqualTo(204);
		assertThat(second.statusCode()).isEqualTo(204);
		assertThat(second.body()).isEmpty();
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.executions("ping")).isOne();
	}

	@Test
	void cookiesAndHeadersOffTheAllowListAreNeverReplayed() {
		HttpResponse<byte[]> first = http().post("/cookies", payment("cookie", 5), "Idempotency-Key", "k-cookie");
		HttpResponse<byte[]> second = http().post("/cookies", payment("cookie", 5), "Idempotency-Key", "k-cookie");
		assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
		assertThat(first.headers().firstValue("X-Not-Stored")).isPresent();
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(second.headers().firstValue("Content-Location"))
			.isEqualTo(first.headers().firstValue("Content-Location"));
		assertThat(second.headers().firstValue("Set-Cookie")).isEmpty();
		assertThat(second.headers().firstValue("X-Not-Stored")).isEmpty();
	}

	@Test
	void anExplicitKeyExpressionWinsOverTheHeader() {
		HttpResponse<byte[]> first = http().post("/accounts/explicit/close", "");
		HttpResponse<byte[]> second = http().post("/accounts/explicit/close", "", "Idempotency-Key", "ignored");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(this.payments.executions("explicit")).isOne();
	}

	@Test
	void twoCallersNeverShareAKey() {
		HttpResponse<byte[]> alice = http().post("/payments", payment("shared", 7), "Idempotency-Key", "k-shared",
				"X-User", "alice");
		HttpResponse<byte[]> bob = http().post("/payments", payment("shared", 7), "Idempotency-Key", "k-shared",
				"X-User", "bob");
		HttpResponse<byte[]> aliceAgain = http().post("/payments", payment("shared", 7), "Idempotency-Key",
				"k-shared", "X-User", "alice");
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(bob.body()).isNotEqualTo(alice.body());
		assertThat(aliceAgain.body()).isEqualTo(alice.body());
		assertThat(this.payments.executions("shared")).isEqualTo(2);
	}

	@Test
	void racingDuplicatesRunOnceAndAllGetTheSameResponse() throws Exception {
		int threads = 16;
		List<String> keys = IntStream.range(0, 50).mapToObj((i) -> "race-" + i).toList();
		Map<String, List<HttpResponse<byte[]>>> responses = new ConcurrentHashMap<>();
		HttpClients http = http();
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(executor.submit(() -> {
					List<String> order = new ArrayList<>(keys);
					Collections.shuffle(order);
					start.await();
					for (String key : order) {
						HttpResponse<byte[]> response = http.post("/payments", payment(key, 10), "Idempotency-Key",
								key);
						responses.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>()).add(response);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		for (String key : keys) {
			List<HttpResponse<byte[]>> answers = responses.get(key);
			assertThat(answers).hasSize(threads);
			assertThat(this.payments.executions(key)).as(key).isOne();
			HttpResponse<byte[]> first = answers.get(0);
			assertThat(first.statusCode()).isEqualTo(201);
			assertThat(answers.stream().filter((answer) -> answer.headers().firstValue("Idempotent-Replayed").isEmpty()))
				.hasSize(1);
			for (HttpResponse<byte[]> answer : answers) {
				assertThat(answer.statusCode()).isEqualTo(201);
				assertThat(answer.body()).isEqualTo(first.body());
				assertThat(HttpClients.headers(answer, "Idempotent-Replayed"))
					.isEqualTo(HttpClients.headers(first, "Idempotent-Replayed"));
			}
		}
	}

}
