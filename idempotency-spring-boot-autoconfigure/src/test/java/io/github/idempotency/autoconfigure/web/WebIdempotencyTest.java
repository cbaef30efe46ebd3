package io.github.idempotency.autoconfigure.web;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;

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
	PaymentsProbe payments;

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

	/** An error page's body without what differs between two answers: the time, the request's id. */
	private static String withoutVaryingFields(String body) {
		return body.replaceAll("\"(timestamp|requestId)\":\"[^\"]*\"", "");
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
		// @ResponseStatus: the error page answers, the first time and on a replay
		HttpResponse<byte[]> first = http().post("/declines", payment("declined", 1), "Idempotency-Key", "k-declined");
		assertThat(first.statusCode()).isEqualTo(402);
		HttpResponse<byte[]> second = http().post("/declines", payment("declined", 1), "Idempotency-Key",
				"k-declined");
		assertThat(second.statusCode()).isEqualTo(402);
		assertThat(second.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(text(second)).contains("\"status\":402").doesNotContain("card declined");
		assertThat(withoutVaryingFields(text(second))).isEqualTo(withoutVaryingFields(text(first)));
		assertThat(this.payments.executions("declined")).isOne();
	}

	@Test
	void aHandlerWhoseResponseCannotBeStoredRanOnceAndIsNotRunAgain() {
		HttpResponse<byte[]> first = http().post("/unwritable", payment("unwritable", 1), "Idempotency-Key", "k-unw");
		// the handler ran; its answer cannot be written (nor sent): recorded as failed, not released
		assertThat(first.statusCode()).isGreaterThanOrEqualTo(500);
		HttpResponse<byte[]> second = http().post("/unwritable", payment("unwritable", 1), "Idempotency-Key", "k-unw");
		assertThat(second.statusCode()).isGreaterThanOrEqualTo(500);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.executions("unwritable")).isOne();
	}

	@Test
	void aReplayedPermanentFailureIsTheApplicationsOwnProblem() {
		HttpResponse<byte[]> first = http().post("/withdrawals", payment("poor", 10), "Idempotency-Key", "k-poor");
		HttpResponse<byte[]> second = http().post("/withdrawals", payment("poor", 10), "Idempotency-Key", "k-poor");
		assertThat(first.statusCode()).isEqualTo(403);
		assertThat(first.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(first)).contains("\"type\":\"https://payments.example/problems/insufficient-funds\"")
			.contains("\"title\":\"Insufficient funds\"")
			.contains("\"detail\":\"Account poor cannot pay this withdrawal\"");
		assertThat(first.headers().firstValue("X-Trace")).isPresent();
		// the application's exception handling ran once: the replay is its first answer
		assertThat(second.statusCode()).isEqualTo(403);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(second.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(second.headers().firstValue("Content-Location")).hasValue("/accounts/poor");
		assertThat(second.headers().firstValue("X-Trace")).isEmpty();
		assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.executions("poor")).isOne();
	}

	@Test
	void aRunWhoseLeaseWasTakenOverIsAConflictProblem() {
		HttpResponse<byte[]> response = http().post("/takeovers", payment("takeover", 1), "Idempotency-Key",
				"k-takeover");
		assertThat(response.statusCode()).isEqualTo(409);
		assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(response)).contains("\"title\":\"Idempotency lease lost\"").contains("\"status\":409");
		assertThat(this.payments.executions("takeover")).isOne();
	}

	@Test
	void aRunWhoseCompletionFindsTheKeyTakenOverIsAConflict() {
		HttpResponse<byte[]> response = http().post("/lost-leases", payment("lost", 1), "Idempotency-Key", "k-lost");
		// its answer was not stored: the key's outcome is the other request's, which a retry reads
		assertThat(response.statusCode()).isEqualTo(409);
		assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(text(response)).contains("409").doesNotContain("pay-");
		assertThat(this.payments.executions("lost")).isOne();
	}

	@Test
	void theSameKeyWithAnotherQueryStringIsUnprocessable() {
		assertThat(http().post("/transfers?to=bob&memo=rent", payment("transfer", 100), "Idempotency-Key", "k-transfer")
			.statusCode()).isEqualTo(201);
		// the order of the parameters does not matter
		HttpResponse<byte[]> reordered = http().post("/transfers?memo=rent&to=bob", payment("transfer", 100),
				"Idempotency-Key", "k-transfer");
		assertThat(reordered.statusCode()).isEqualTo(201);
		assertThat(reordered.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		HttpResponse<byte[]> other = http().post("/transfers?to=eve&memo=rent", payment("transfer", 100),
				"Idempotency-Key", "k-transfer");
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(text(other)).contains("\"status\":422");
		assertThat(this.payments.executions("transfer")).isOne();
	}

	@Test
	void repeatedQueryParametersKeepTheirOrder() {
		assertThat(http().post("/transfers?to=bob&to=eve", payment("repeated", 1), "Idempotency-Key", "k-repeated")
			.statusCode()).isEqualTo(201);
		assertThat(http().post("/transfers?to=eve&to=bob", payment("repeated", 1), "Idempotency-Key", "k-repeated")
			.statusCode()).isEqualTo(422);
	}

	@Test
	void theSameKeyWithOtherFormFieldsIsUnprocessable() {
		HttpResponse<byte[]> first = http().postForm("/forms", "account=form&amount=5", "Idempotency-Key", "k-form");
		assertThat(first.statusCode()).isEqualTo(200);
		HttpResponse<byte[]> reordered = http().postForm("/forms", "amount=5&account=form", "Idempotency-Key",
				"k-form");
		assertThat(reordered.statusCode()).isEqualTo(200);
		assertThat(reordered.body()).isEqualTo(first.body());
		HttpResponse<byte[]> other = http().postForm("/forms", "account=form&amount=500", "Idempotency-Key",
				"k-form");
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.payments.executions("form")).isOne();
	}

	@Test
	void theBodyIsComparedAsReceived() {
		// the same receipt-worthy fields, another JSON text: another request
		assertThat(http().post("/payments", payment("bytes", 3), "Idempotency-Key", "k-bytes").statusCode())
			.isEqualTo(201);
		HttpResponse<byte[]> reformatted = http().post("/payments", "{\"amount\":3,\"account\":\"bytes\"}",
				"Idempotency-Key", "k-bytes");
		assertThat(reformatted.statusCode()).isEqualTo(422);
		assertThat(this.payments.executions("bytes")).isOne();
	}

	@Test
	void anEmptyStructuredFieldStringIsAMissingKey() {
		HttpResponse<byte[]> response = http().post("/payments", payment("empty", 1), "Idempotency-Key", "\"\"");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(this.payments.executions("empty")).isZero();
	}

	@Test
	void aMalformedKeyHeaderIsABadRequest() {
		for (String malformed : new String[] { "\"unterminated", "\"a\\nb\"", "\"a\" trailing", "a b",
				"\"a\", \"b\"", "\"a\";=1", "k;v=1" }) {
			HttpResponse<byte[]> response = http().post("/payments", payment("malformed", 1), "Idempotency-Key",
					malformed);
			assertThat(response.statusCode()).as(malformed).isEqualTo(400);
			assertThat(text(response)).as(malformed).contains("\"status\":400");
		}
		assertThat(this.payments.executions("malformed")).isZero();
	}

	@Test
	void aStructuredFieldStringAndABareTokenAreTheSameKey() {
		HttpResponse<byte[]> quoted = http().post("/payments", payment("sf", 4), "Idempotency-Key",
				"\"8e03978e-40d5-43e8-bc93-6894a57f9324\"");
		HttpResponse<byte[]> bare = http().post("/payments", payment("sf", 4), "Idempotency-Key",
				"8e03978e-40d5-43e8-bc93-6894a57f9324");
		HttpResponse<byte[]> withParameters = http().post("/payments", payment("sf", 4), "Idempotency-Key",
				"\"8e03978e-40d5-43e8-bc93-6894a57f9324\";v=1");
		assertThat(quoted.statusCode()).isEqualTo(201);
		assertThat(bare.statusCode()).isEqualTo(201);
		assertThat(bare.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(withParameters.body()).isEqualTo(quoted.body());
		assertThat(this.payments.executions("sf")).isOne();
	}

	@Test
	void escapesInAStructuredFieldStringAreKeyCharacters() {
		HttpResponse<byte[]> escaped = http().post("/payments", payment("escaped", 4), "Idempotency-Key",
				"\"a\\\"b\\\\c\"");
		HttpResponse<byte[]> same = http().post("/payments", payment("escaped", 4), "Idempotency-Key",
				"\"a\\\"b\\\\c\"");
		HttpResponse<byte[]> other = http().post("/payments", payment("escaped", 4), "Idempotency-Key", "\"ab\\\\c\"");
		assertThat(escaped.statusCode()).isEqualTo(201);
		assertThat(same.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(other.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.payments.executions("escaped")).isEqualTo(2);
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
		// the record holds the status the client got (WebFlux sets a plain result's only after the method returned)
		assertThat(this.store.find(new RecordId("orders", "-|k-order"))).hasValueSatisfying(
				(record) -> assertThat(record.response()).contains("\"status\":201"));
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


	@Test
	void aHandlerThatWritesTheResponseItselfIsReplayedByteForByte() {
		HttpResponse<byte[]> first = http().post("/receipts", payment("writer", 5), "Idempotency-Key", "k-writer");
		HttpResponse<byte[]> replay = http().post("/receipts", payment("writer", 5), "Idempotency-Key", "k-writer");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(text(first)).startsWith("receipt pay-");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(HttpClients.headers(replay, "Idempotent-Replayed")).isEqualTo(HttpClients.headers(first));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.payments.executions("writer")).isOne();
	}

	@Test
	void aStatusSetOnTheResponseBesideAReturnedBodyIsReplayed() {
		HttpResponse<byte[]> first = http().post("/acceptances", payment("accepted", 5), "Idempotency-Key", "k-202");
		HttpResponse<byte[]> replay = http().post("/acceptances", payment("accepted", 5), "Idempotency-Key", "k-202");
		assertThat(first.statusCode()).isEqualTo(202);
		assertThat(replay.statusCode()).isEqualTo(202);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(this.payments.executions("accepted")).isOne();
	}

	/** When a client goes away, against the handler's blocking work. */
	enum Disconnect {

		BEFORE_THE_WORK, DURING_THE_WORK, AFTER_THE_WORK

	}

	@ParameterizedTest
	@EnumSource(Disconnect.class)
	void aClientThatGoesAwayNeverRunsItTwice(Disconnect when) throws Exception {
		String account = "gone-" + when.ordinal();
		String body = payment(account, 1);
		HttpClients http = http();
		this.payments.hold();
		try (java.net.Socket client = http.open("/gateway", body, "Idempotency-Key", "k-" + account)) {
			if (when == Disconnect.BEFORE_THE_WORK) {
				client.close();
				this.payments.release();
			}
			else {
				assertThat(this.payments.awaitEntered()).isTrue();
				if (when == Disconnect.AFTER_THE_WORK) {
					this.payments.release();
				}
				client.close();
				this.payments.release();
			}
		}
		// the run is the server's: it ends, its answer is stored, and the retry gets it (or,
		// when it never started, runs it now), after waiting for a run in progress
		HttpResponse<byte[]> retry = http.post("/gateway", body, "Idempotency-Key", "k-" + account);
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(this.payments.executions(account)).isOne();
		HttpResponse<byte[]> again = http.post("/gateway", body, "Idempotency-Key", "k-" + account);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(again.body()).isEqualTo(retry.body());
		assertThat(this.payments.executions(account)).isOne();
	}

}
