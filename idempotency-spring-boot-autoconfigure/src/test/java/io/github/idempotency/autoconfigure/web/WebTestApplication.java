package io.github.idempotency.autoconfigure.web;

import java.net.URI;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServletResponse;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.Idempotent;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.beans.factory.ObjectProvider;
import io.github.idempotency.InProgressPolicy;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * A web application with {@code @Idempotent} handler methods.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ WebTestApplication.Payments.class, WebTestApplication.Security.class })
class WebTestApplication {

	/**
	 * Spring Security with two users over basic auth: {@code /me/**} needs one of them,
	 * the rest is open (and anonymous without credentials).
	 */
	@Configuration(proxyBeanMethods = false)
	static class Security {

		/**
		 * The application's own authentication, without an order: a request with an
		 * {@code X-Api-Key} is the caller the key names.
		 */
		@Bean
		jakarta.servlet.Filter apiKeys() {
			return new org.springframework.web.filter.OncePerRequestFilter() {

				@Override
				protected void doFilterInternal(jakarta.servlet.http.HttpServletRequest request,
						HttpServletResponse response, jakarta.servlet.FilterChain chain)
						throws jakarta.servlet.ServletException, java.io.IOException {
					String key = request.getHeader("X-Api-Key");
					if (key == null) {
						chain.doFilter(request, response);
						return;
					}
					Principal caller = () -> key.replace("-key", "");
					chain.doFilter(new jakarta.servlet.http.HttpServletRequestWrapper(request) {

						@Override
						public Principal getUserPrincipal() {
							return caller;
						}

					}, response);
				}

			};
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) {
			return http.authorizeHttpRequests((requests) -> requests.requestMatchers("/me/**")
				.authenticated()
				.anyRequest()
				.permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@Bean
		UserDetailsService users() {
			return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-pw").build(),
					User.withUsername("bob").password("{noop}bob-pw").build());
		}

	}

	/** A response that Jackson can describe but not write: its getter throws. */
	static class Unwritable {

		public String getReceipt() {
			throw new IllegalStateException("the receipt cannot be read");
		}

		public void setReceipt(String receipt) {
		}

	}

	record PaymentRequest(String account, long amount) {
	}

	record Receipt(String id, String account, long amount) {
	}

	@ResponseStatus(HttpStatus.PAYMENT_REQUIRED)
	static class CardDeclinedException extends RuntimeException {

		CardDeclinedException(String message) {
			super(message);
		}

	}

	static class OutOfStockException extends ErrorResponseException {

		OutOfStockException() {
			super(HttpStatus.GONE);
		}

	}

	static class InsufficientFundsException extends RuntimeException {

		final String account;

		InsufficientFundsException(String account) {
			super("insufficient funds on " + account);
			this.account = account;
		}

	}

	@RestController
	static class Payments implements PaymentsProbe {

		final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

		final AtomicInteger sequence = new AtomicInteger();

		private final ObjectProvider<IdempotencyStore> store;

		Payments(ObjectProvider<IdempotencyStore> store) {
			this.store = store;
		}

		private volatile CountDownLatch entered = new CountDownLatch(1);

		private volatile CountDownLatch release = new CountDownLatch(0);

		// the tests hold a proxy: its state is reached through methods

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
		Receipt order(@RequestBody PaymentRequest request, HttpServletResponse response) {
			String id = run(request.account());
			response.setHeader("Location", "/orders/" + id);
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
		Receipt form(@RequestParam String account, @RequestParam long amount) {
			return new Receipt(run(account), account, amount);
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

		// the application's own answer to a permanent failure: a problem of its own type,
		// an allow-listed header and one off the list
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

		@PostMapping("/receipts")
		@Idempotent
		void receipt(@RequestBody PaymentRequest request, HttpServletResponse response) throws java.io.IOException {
			String id = run(request.account());
			// the handler answers by writing the response itself
			response.setStatus(HttpServletResponse.SC_CREATED);
			response.setHeader("Location", "/receipts/" + id);
			response.setContentType("text/plain;charset=UTF-8");
			response.getWriter().write("receipt " + id);
		}

		@PostMapping("/acceptances")
		@Idempotent
		Receipt accept(@RequestBody PaymentRequest request, HttpServletResponse response) {
			String id = run(request.account());
			response.setStatus(HttpServletResponse.SC_ACCEPTED);
			return new Receipt(id, request.account(), request.amount());
		}

		@PostMapping("/api-key/payments")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Receipt payByApiKey(@RequestBody PaymentRequest request, Principal principal) {
			return payMine(request, principal);
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
