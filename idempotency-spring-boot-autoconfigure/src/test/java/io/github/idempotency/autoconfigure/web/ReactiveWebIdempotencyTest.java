package io.github.idempotency.autoconfigure.web;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.RecordId;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every HTTP behaviour of {@link WebIdempotencyTest}, on WebFlux: {@code Mono} handler
 * methods on Reactor Netty, through a real HTTP client, on the memory backend, which is
 * non-blocking: the engine claims and settles without a thread of its own. After each test,
 * no store call ran on a non-blocking thread (an event loop, a {@code parallel} worker), and
 * BlockHound saw no blocking call there, from the claim to the replay.
 */
@ExtendWith(BlockHoundCheck.class)
@SpringBootTest(classes = ReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				"idempotency.backend=memory",
				"idempotency.web.principal=#request.headers.getFirst('X-User')", PrincipalScopeTest.EXCLUDE })
class ReactiveWebIdempotencyTest extends WebIdempotencyTest {

	@Autowired
	ReactiveWebTestApplication.StoreCallThreads threads;

	@AfterEach
	void noStoreCallRanOnANonBlockingThread() {
		NonBlockingThreadCheck check = this.threads.check();
		List<String> violations = check.violations();
		check.clear();
		assertThat(violations).isEmpty();
	}

	@Test
	void reactorNettysEventLoopsAreNonBlockingThreads() {
		// the premise of the check: a handler subscribed on an event loop sees it as non-blocking
		HttpResponse<byte[]> response = new HttpClients(this.port).send(HttpRequest
			.newBuilder(URI.create("http://localhost:" + this.port + "/threads"))
			.header("Content-Type", "text/plain")
			.POST(HttpRequest.BodyPublishers.ofString("where"))
			.build());
		assertThat(new String(response.body(), StandardCharsets.UTF_8))
			.matches("true (reactor|webflux)-http-(epoll|nio|kqueue)-\\d+");
	}

	@Test
	void theCheckSeesAStoreCallOnANonBlockingThread() {
		NonBlockingThreadCheck check = this.threads.check();
		Mono.fromRunnable(() -> check.find(new RecordId("payments", "-|nowhere")))
			.subscribeOn(Schedulers.parallel())
			// the blocking view of a non-blocking store refuses to wait there: recorded all the same
			.onErrorResume(IllegalStateException.class, (refused) -> Mono.empty())
			.block();
		assertThat(check.violations()).singleElement().asString().startsWith("find on parallel-");
		check.clear();
		BlockHoundCheck.forget();
	}

	@Test
	void aSubscriberThatLeavesDoesNotStopTheRun() throws Exception {
		HttpClients http = new HttpClients(this.port);
		this.payments.hold();
		CompletableFuture<HttpResponse<byte[]>> first = http
			.sendAsync(http.request("/slow", "{\"account\":\"left\",\"amount\":1}", "Idempotency-Key", "k-left"));
		assertThat(this.payments.awaitEntered()).isTrue();
		first.cancel(true);
		this.payments.release();
		// the run goes on without its subscriber: a retry is answered with its response, once it is stored
		Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			HttpResponse<byte[]> retry = http.post("/slow", "{\"account\":\"left\",\"amount\":1}",
					"Idempotency-Key", "k-left");
			assertThat(retry.statusCode()).isEqualTo(200);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		});
		assertThat(this.payments.executions("left")).isOne();
	}


	@Test
	void aMultipartUploadWithAPayloadIsAnsweredAndReplayed() {
		HttpClients http = new HttpClients(this.port);
		String boundary = "idempotency-boundary";
		String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"reference\"\r\n\r\nup-1\r\n"
				+ "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"scan.txt\"\r\n"
				+ "Content-Type: text/plain\r\n\r\nhello scan\r\n--" + boundary + "--\r\n";
		java.net.http.HttpRequest upload = java.net.http.HttpRequest
			.newBuilder(java.net.URI.create("http://localhost:" + this.port + "/uploads"))
			.header("Content-Type", "multipart/form-data; boundary=" + boundary)
			.header("Idempotency-Key", "k-upload")
			.POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
			.build();
		HttpResponse<byte[]> first = http.send(upload);
		HttpResponse<byte[]> again = http.send(upload);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(new String(first.body(), java.nio.charset.StandardCharsets.UTF_8)).startsWith("scan.txt 10 bytes");
		assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(again.body()).isEqualTo(first.body());
		assertThat(this.payments.executions("up-1")).isOne();
	}

}
