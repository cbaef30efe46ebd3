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
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.Idempotent;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.autoconfigure.EngineSettingsOf;
import io.github.idempotency.autoconfigure.IdempotencyProperties;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.autoconfigure.web.WebTestApplication.CardDeclinedException;
import io.github.idempotency.autoconfigure.web.WebTestApplication.InsufficientFundsException;
import io.github.idempotency.autoconfigure.web.WebTestApplication.OutOfStockException;
import io.github.idempotency.autoconfigure.web.WebTestApplication.PaymentRequest;
import io.github.idempotency.autoconfigure.web.WebTestApplication.Receipt;
import io.github.idempotency.autoconfigure.web.WebTestApplication.Unwritable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebExchange;

/**
 * The WebFlux twin of {@link WebTestApplication}: the same endpoints, returning
 * {@code Mono}s, on Reactor Netty, with its store wrapped in a
 * {@link NonBlockingThreadCheck}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ ReactiveWebTestApplication.Payments.class, ReactiveWebTestApplication.Problems.class,
		ReactiveWebTestApplication.Security.class, ReactiveWebTestApplication.ThreadCheck.class })
class ReactiveWebTestApplication {

	/** The property that makes it a reactive application. */
	static final String REACTIVE = "spring.main.web-application-type=reactive";

	/**
	 * Problem details for Spring's own exceptions, as a payments API would have them (Spring
	 * Boot's WebFlux error page answers an {@code ErrorResponseException} with 500 without).
	 */
	static final String PROBLEM_DETAILS = "spring.webflux.problemdetails.enabled=true";

	/**
	 * Spring Security with two users over basic auth: {@code /me/**} needs one of them,
	 * the rest is open (and anonymous without credentials).
	 */
	@Configuration(proxyBeanMethods = false)
	static class Security {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.pathMatchers("/me/**")
				.authenticated()
				.anyExchange()
				.permitAll())
				.httpBasic((basic) -> {
				})
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

		/**
		 * The application's own authentication, without an order: a request with an
		 * {@code X-Api-Key} is the caller the key names, set on the exchange the handler
		 * sees after every filter.
		 */
		@Bean
		org.springframework.web.server.WebFilter apiKeys() {
			return (exchange, chain) -> {
				String key = exchange.getRequest().getHeaders().getFirst("X-Api-Key");
				if (key == null) {
					return chain.filter(exchange);
				}
				Principal caller = () -> key.replace("-key", "");
				return chain.filter(exchange.mutate().principal(Mono.just(caller)).build());
			};
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("alice").password("{noop}alice-pw").roles("USER").build(),
					User.withUsername("bob").password("{noop}bob-pw").roles("USER").build());
		}

	}

	/**
	 * Every blocking store call of the engine is checked: none may run on a non-blocking
	 * thread. The engine is the auto-configuration's, on the selected store wrapped in the
	 * check, and on the store's non-blocking side when it has one (which
	 * {@link BlockHoundCheck} checks).
	 */
	@Configuration(proxyBeanMethods = false)
	static class ThreadCheck {

		@Bean
		StoreCallThreads storeCallThreads(IdempotencyStore store) {
			return new StoreCallThreads(new NonBlockingThreadCheck(store));
		}

		@Bean
		IdempotencyEngine idempotencyEngine(StoreCallThreads threads, IdempotencyProperties properties,
				ObjectProvider<ReactiveIdempotencyStore> reactiveStore) {
			IdempotencyEngine.Builder engine = IdempotencyEngine.builder(threads.check(), JsonMapper.builder().build())
				.settings(EngineSettingsOf.of(properties));
			reactiveStore.ifUnique(engine::reactiveStore);
			return engine.build();
		}

	}

	/** The checked store, which the engine calls. */
	record StoreCallThreads(NonBlockingThreadCheck check) {
	}

	/** The application's own answer to a permanent failure, as on Spring MVC. */
	@RestControllerAdvice
	static class Problems {

		private final AtomicInteger sequence = new AtomicInteger();

		@ExceptionHandler(InsufficientFundsException.class)
		ResponseEntity<ProblemDetail> insufficientFunds(InsufficientFundsException ex) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.FORBIDDEN,
					"Account " + ex.account + " cannot pay this withdrawal");
			problem.setType(URI.create("https://payments.example/problems/insufficient-funds"));
			problem.setTitle("Insufficient funds");
			problem.setProperty("attempt", this.sequence.incrementAndGet());
			return ResponseEntity.status(HttpStatus.FORBIDDEN)
				.header("Content-Location", "/accounts/" + ex.account)
				.header("X-Trace", "trace-" + this.sequence.get())
				.body(problem);
		}

	}

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

		/**
		 * Where a request's body arrives (Reactor Netty delivers it on the connection's event
		 * loop): whether Reactor sees the thread as non-blocking, and its name.
		 */
		@PostMapping("/threads")
		Mono<String> thread(@RequestBody Mono<String> body) {
			return body.map((text) -> Schedulers.isInNonBlockingThread() + " " + Thread.currentThread().getName());
		}

		// the body is read after the claim, and the result arrives on a non-blocking thread
		@PostMapping("/payments")
		@Idempotent(workflow = "payments")
		Mono<ResponseEntity<Receipt>> pay(@RequestBody Mono<PaymentRequest> request) {
			return request.publishOn(Schedulers.parallel()).map((payment) -> {
				String id = run(payment.account());
				return ResponseEntity.created(URI.create("/payments/" + id))
					.eTag("\"" + id + "\"")
					.body(new Receipt(id, payment.account(), payment.amount()));
			});
		}

		@PostMapping("/cookies")
		@Idempotent
		Mono<ResponseEntity<Receipt>> withCookie(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> {
				String id = run(request.account());
				return ResponseEntity.ok()
					.header("Set-Cookie", "session=" + id)
					.header("X-Not-Stored", id)
					.header("Content-Location", "/payments/" + id)
					.body(new Receipt(id, request.account(), request.amount()));
			});
		}

		@PostMapping("/orders")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent(workflow = "orders")
		Mono<Receipt> order(@RequestBody PaymentRequest request, ServerHttpResponse response) {
			return Mono.fromSupplier(() -> {
				String id = run(request.account());
				response.getHeaders().set("Location", "/orders/" + id);
				return new Receipt(id, request.account(), request.amount());
			});
		}

		@PostMapping("/accounts/{account}/close")
		@Idempotent(key = "'close-' + #account")
		Mono<String> close(@PathVariable String account) {
			return Mono.fromSupplier(() -> run(account));
		}

		@PostMapping("/unwritable")
		@Idempotent
		Mono<Unwritable> unwritable(@RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> {
				run(request.account());
				return new Unwritable();
			});
		}

		@PostMapping("/pings")
		@ResponseStatus(HttpStatus.NO_CONTENT)
		@Idempotent
		Mono<Void> ping(@RequestBody PaymentRequest request) {
			return Mono.fromRunnable(() -> run(request.account()));
		}

		@PostMapping("/declines")
		@Idempotent(recordFailureFor = { CardDeclinedException.class, OutOfStockException.class })
		Mono<Receipt> decline(@RequestBody PaymentRequest request) {
			return Mono.fromCallable(() -> {
				run(request.account());
				if (request.amount() < 0) {
					throw new OutOfStockException();
				}
				throw new CardDeclinedException("card declined for " + request.account());
			});
		}

		@PostMapping("/transfers")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Mono<Receipt> transfer(@RequestParam String to, @RequestBody PaymentRequest request) {
			return Mono.fromSupplier(() -> {
				String id = run(request.account());
				return new Receipt(id, request.account() + "->" + to, request.amount());
			});
		}

		@PostMapping(path = "/forms", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE)
		@Idempotent
		Mono<Receipt> form(ServerWebExchange exchange) {
			return exchange.getFormData().map((form) -> {
				String account = form.getFirst("account");
				long amount = Long.parseLong(form.getFirst("amount"));
				return new Receipt(run(account), account, amount);
			});
		}

		@PostMapping("/me/payments")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Mono<Receipt> payMine(@RequestBody PaymentRequest request, Principal principal) {
			return Mono.fromSupplier(() -> {
				run(principal.getName());
				return new Receipt("pay-" + this.sequence.incrementAndGet(), principal.getName(), request.amount());
			});
		}

		@PostMapping("/withdrawals")
		@Idempotent(recordFailureFor = InsufficientFundsException.class)
		Mono<Receipt> withdraw(@RequestBody PaymentRequest request) {
			return Mono.fromCallable(() -> {
				run(request.account());
				throw new InsufficientFundsException(request.account());
			});
		}

		@PostMapping("/takeovers")
		@Idempotent
		Mono<Receipt> takenOver(@RequestBody PaymentRequest request) {
			// the context is the call's: read while the method is called
			IdempotencyContext context = IdempotencyContext.current();
			return Mono.fromCallable(() -> {
				String id = run(request.account());
				// another run takes the key over while this one runs: its lease is lost
				this.store.getObject().delete(new RecordId(context.workflow(), context.key()));
				context.saveRecoveryPoint("charged");
				return new Receipt(id, request.account(), request.amount());
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@PostMapping("/api-key/payments")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Mono<Receipt> payByApiKey(@RequestBody PaymentRequest request, Principal principal) {
			return payMine(request, principal);
		}

		@PostMapping("/receipts")
		@Idempotent
		Mono<Void> receipt(@RequestBody PaymentRequest request, ServerHttpResponse response) {
			return Mono.defer(() -> {
				String id = run(request.account());
				// the handler answers by writing the response itself
				response.setStatusCode(HttpStatus.CREATED);
				response.getHeaders().set("Location", "/receipts/" + id);
				response.getHeaders().setContentType(MediaType.parseMediaType("text/plain;charset=UTF-8"));
				return response.writeWith(Mono.just(response.bufferFactory()
					.wrap(("receipt " + id).getBytes(java.nio.charset.StandardCharsets.UTF_8))));
			});
		}

		@PostMapping("/acceptances")
		@Idempotent
		Mono<Receipt> accept(@RequestBody PaymentRequest request, ServerHttpResponse response) {
			return Mono.fromSupplier(() -> {
				String id = run(request.account());
				response.setStatusCode(HttpStatus.ACCEPTED);
				return new Receipt(id, request.account(), request.amount());
			});
		}

		@PostMapping("/lost-leases")
		@Idempotent
		Mono<Receipt> lostAtCompletion(@RequestBody PaymentRequest request) {
			// another run takes the key over while this one runs: its completion finds it gone
			IdempotencyContext context = IdempotencyContext.current();
			// the store is blocking (a view of a non-blocking one, maybe): off the event loop
			return Mono.fromRunnable(() -> this.store.getObject().delete(new RecordId(context.workflow(), context.key())))
				.subscribeOn(Schedulers.boundedElastic())
				.then(Mono.fromSupplier(() -> new Receipt(run(request.account()), request.account(), request.amount())));
		}

		@PostMapping("/gateway")
		@Idempotent
		Mono<String> gateway(@RequestBody PaymentRequest request) {
			// a payment gateway's call that blocks: off the event loop, where a non-blocking
			// store's claim answers and subscribes the handler's result
			return Mono.fromCallable(() -> held(request)).subscribeOn(Schedulers.boundedElastic());
		}

		@PostMapping(path = "/uploads", consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent(payload = "#reference")
		Mono<String> upload(@org.springframework.web.bind.annotation.RequestPart("reference") String reference,
				@org.springframework.web.bind.annotation.RequestPart("file")
				Mono<org.springframework.http.codec.multipart.FilePart> file) {
			return file.flatMap((part) -> org.springframework.core.io.buffer.DataBufferUtils.join(part.content())
				.map((content) -> {
					int size = content.readableByteCount();
					org.springframework.core.io.buffer.DataBufferUtils.release(content);
					run(reference);
					return part.filename() + " " + size + " bytes, upload " + this.sequence.incrementAndGet();
				}));
		}

		@PostMapping("/settlements")
		@Idempotent
		Mono<String> settle(@RequestBody PaymentRequest request) {
			// a slow run that holds no thread of the application's while it waits
			return Mono.fromCallable(() -> held(request)).subscribeOn(Schedulers.boundedElastic());
		}

		@PostMapping("/slow")
		@Idempotent(onInProgress = InProgressPolicy.REJECT)
		Mono<String> slow(@RequestBody PaymentRequest request) {
			return Mono.fromCallable(() -> held(request)).subscribeOn(Schedulers.boundedElastic());
		}

		/** A run that waits for {@link #release()}, on the thread that runs it. */
		private String held(PaymentRequest request) throws InterruptedException {
			String id = run(request.account());
			this.entered.countDown();
			if (!this.release.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("not released");
			}
			return id;
		}

	}

}
