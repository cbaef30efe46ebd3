package io.github.idempotency.autoconfigure.web;

import java.net.URI;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.Idempotent;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.autoconfigure.web.WebTestApplication.CardDeclinedException;
import io.github.idempotency.autoconfigure.web.WebTestApplication.InsufficientFundsException;
import io.github.idempotency.autoconfigure.web.WebTestApplication.OutOfStockException;
import io.github.idempotency.autoconfigure.web.WebTestApplication.PaymentRequest;
import io.github.idempotency.autoconfigure.web.WebTestApplication.Receipt;
import io.github.idempotency.autoconfigure.web.WebTestApplication.Unwritable;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The twin of {@link ReactiveWebTestApplication} whose handler methods return plain
 * results ({@code T}, {@code ResponseEntity<T>}, {@code void}) on WebFlux, with the same
 * security, exception handling and checked store. It runs them idempotently only with
 * {@link BlockingExecution} and {@link #PROPAGATION}; the tests that leave either out see
 * each call refused.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ PlainReactiveWebTestApplication.Payments.class, ReactiveWebTestApplication.Problems.class,
		ReactiveWebTestApplication.Security.class, ReactiveWebTestApplication.ThreadCheck.class })
class PlainReactiveWebTestApplication {

	/** Reactor's automatic context propagation, which restores the request on the handler's thread. */
	static final String PROPAGATION = "spring.reactor.context-propagation=auto";

	@RestController
	static class Payments implements PaymentsProbe {

		final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

		final AtomicInteger sequence = new AtomicInteger();

		private final ObjectProvider<IdempotencyStore> store;

		private volatile CountDownLatch entered = new CountDownLatch(1);

		private volatile CountDownLatch release = new CountDownLatch(0);

		Payments(ObjectProvider<IdempotencyStore> store) {
			this.store = store;
		}

		@Override
		public void hold() {
			this.entered = new CountDownLatch(1);
			this.release = new CountDownLatch(1);
		}

		@Override
		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(30, TimeUnit.SECONDS);
		}

		@Override
		public void release() {
			this.release.countDown();
		}

		@Override
		public int executions(String account) {
			AtomicInteger count = this.executions.get(account);
			return (count != null) ? count.get() : 0;
		}

		private String run(String account) {
			this.executions.computeIfAbsent(account, (key) -> new AtomicInteger()).incrementAndGet();
			return "pay-" + this.sequence.incrementAndGet();
		}

		/** Where a request's body arrives: a {@code Mono} is not called on the blocking executor. */
		@PostMapping("/threads")
		Mono<String> thread(@RequestBody Mono<String> body) {
			return body.map((text) -> Schedulers.isInNonBlockingThread() + " " + Thread.currentThread().getName());
		}

		@PostMapping("/payments")
		@Idempotent(workflow = "payments")
		ResponseEntity<Receipt> pay(@RequestBody PaymentRequest request) {
			String id = run(request.account());
			return ResponseEntity.created(URI.create("/payments/" + id))
				.eTag("\"" + id + "\"")
				.body(new Receipt(id, request.account(), request.amount()));
		}

		@PostMapping("/cookies")
		@Idempotent
		ResponseEntity<Receipt> withCookie(@RequestBody PaymentRequest request) {
			String id = run(request.account());
			return ResponseEntity.ok()
				.header("Set-Cookie", "session=" + id)
				.header("X-Not-Stored", id)
				.header("Content-Location", "/payments/" + id)
				.body(new Receipt(id, request.account(), request.amount()));
		}

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent(workflow = "orders")
		Receipt order(@RequestBody PaymentRequest request, ServerHttpResponse response) {
			String id = run(request.account());
			response.getHeaders().set("Location", "/orders/" + id);
			return new Receipt(id, request.account(), request.amount());
		}

		@PostMapping("/accounts/{account}/close")
		@Idempotent(key = "'close-' + #account")
		String close(@PathVariable String account) {
			return run(account);
		}

		@PostMapping("/unwritable")
		@Idempotent
		Unwritable unwritable(@RequestBody PaymentRequest request) {
			run(request.account());
			return new Unwritable();
		}

		@PostMapping("/pings")
		@ResponseStatus(HttpStatus.NO_CONTENT)
		@Idempotent
		void ping(@RequestBody PaymentRequest request) {
			run(request.account());
		}

		@PostMapping("/declines")
		@Idempotent(recordFailureFor = { CardDeclinedException.class, OutOfStockException.class })
		Receipt decline(@RequestBody PaymentRequest request) {
			run(request.account());
			if (request.amount() < 0) {
				throw new OutOfStockException();
			}
			throw new CardDeclinedException("card declined for " + request.account());
		}

		@PostMapping("/transfers")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Receipt transfer(@RequestParam String to, @RequestBody PaymentRequest request) {
			String id = run(request.account());
			return new Receipt(id, request.account() + "->" + to, request.amount());
		}

		@PostMapping(path = "/forms", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE)
		@Idempotent
		Receipt form(@ModelAttribute PaymentRequest form) {
			return new Receipt(run(form.account()), form.account(), form.amount());
		}

		@PostMapping("/me/payments")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Receipt payMine(@RequestBody PaymentRequest request, Principal principal) {
			run(principal.getName());
			return new Receipt("pay-" + this.sequence.incrementAndGet(), principal.getName(), request.amount());
		}

		@PostMapping("/withdrawals")
		@Idempotent(recordFailureFor = InsufficientFundsException.class)
		Receipt withdraw(@RequestBody PaymentRequest request) {
			run(request.account());
			throw new InsufficientFundsException(request.account());
		}

		@PostMapping("/takeovers")
		@Idempotent
		Receipt takenOver(@RequestBody PaymentRequest request) {
			String id = run(request.account());
			// another run takes the key over while this one runs: its lease is lost
			IdempotencyContext context = IdempotencyContext.current();
			this.store.getObject().delete(new RecordId(context.workflow(), context.key()));
			context.saveRecoveryPoint("charged");
			return new Receipt(id, request.account(), request.amount());
		}

		@PostMapping("/api-key/payments")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Receipt payByApiKey(@RequestBody PaymentRequest request, Principal principal) {
			return payMine(request, principal);
		}

		@PostMapping("/receipts")
		@Idempotent
		void receipt(@RequestBody PaymentRequest request, ServerHttpResponse response) {
			String id = run(request.account());
			// the handler answers by writing the response itself (this thread may block)
			response.setStatusCode(HttpStatus.CREATED);
			response.getHeaders().set("Location", "/receipts/" + id);
			response.getHeaders().setContentType(MediaType.parseMediaType("text/plain;charset=UTF-8"));
			response.writeWith(Mono.just(response.bufferFactory()
				.wrap(("receipt " + id).getBytes(java.nio.charset.StandardCharsets.UTF_8)))).block();
		}

		@PostMapping("/acceptances")
		@Idempotent
		Receipt accept(@RequestBody PaymentRequest request, ServerHttpResponse response) {
			String id = run(request.account());
			response.setStatusCode(HttpStatus.ACCEPTED);
			return new Receipt(id, request.account(), request.amount());
		}

		@PostMapping(path = "/uploads", consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent(payload = "#reference")
		String upload(@org.springframework.web.bind.annotation.RequestPart("reference") String reference,
				@org.springframework.web.bind.annotation.RequestPart("file")
				org.springframework.http.codec.multipart.FilePart file) {
			// this thread may block
			org.springframework.core.io.buffer.DataBuffer content = org.springframework.core.io.buffer.DataBufferUtils
				.join(file.content())
				.block();
			int size = (content != null) ? content.readableByteCount() : 0;
			org.springframework.core.io.buffer.DataBufferUtils.release(content);
			run(reference);
			return file.filename() + " " + size + " bytes, upload " + this.sequence.incrementAndGet();
		}

		@PostMapping("/lost-leases")
		@Idempotent
		Receipt lostAtCompletion(@RequestBody PaymentRequest request) {
			String id = run(request.account());
			// another run takes the key over while this one runs: its completion finds it gone
			IdempotencyContext context = IdempotencyContext.current();
			this.store.getObject().delete(new RecordId(context.workflow(), context.key()));
			return new Receipt(id, request.account(), request.amount());
		}

		@PostMapping("/gateway")
		@Idempotent
		String gateway(@RequestBody PaymentRequest request) throws InterruptedException {
			return slow(request);
		}

		@PostMapping("/slow")
		@Idempotent(onInProgress = InProgressPolicy.REJECT)
		String slow(@RequestBody PaymentRequest request) throws InterruptedException {
			String id = run(request.account());
			this.entered.countDown();
			if (!this.release.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("not released");
			}
			return id;
		}

	}

}
