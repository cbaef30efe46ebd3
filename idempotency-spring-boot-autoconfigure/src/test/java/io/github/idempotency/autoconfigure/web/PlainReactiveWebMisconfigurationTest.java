package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Hooks;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux handler method with a plain result, on a server where it cannot run
 * idempotently: each call fails with an {@code IllegalStateException} that names what to
 * turn on (here shown in the error page's message), before the method runs, before the
 * store is called, and never on an event loop.
 */
class PlainReactiveWebMisconfigurationTest {

	static final String MESSAGE = "spring.web.error.include-message=always";

	/** Blocking execution off: WebFlux calls the method on an event loop. */
	@Nested
	@SpringBootTest(classes = PlainReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { ReactiveWebTestApplication.REACTIVE, PlainReactiveWebTestApplication.PROPAGATION,
					"idempotency.backend=memory", MESSAGE, PrincipalScopeTest.EXCLUDE })
	@ExtendWith(AutomaticContextPropagation.class)
	class WithoutBlockingExecution extends Refused {

		@Test
		void theCallIsRefusedNamingBlockingExecution() {
			String message = refused("k-event-loop");
			assertThat(message).contains("non-blocking thread (an event loop)")
				.contains("WebFluxConfigurer#configureBlockingExecution")
				.contains("spring.threads.virtual.enabled=true")
				.doesNotContain("spring.reactor.context-propagation");
		}

	}

	/**
	 * Automatic context propagation turned off after the start (which fails when it is off,
	 * see {@link ReactiveHandlerMethodIdempotencyStartTest}): the request is not bound to
	 * the blocking thread.
	 */
	@Nested
	@SpringBootTest(
			classes = { PlainReactiveWebTestApplication.class, BlockingExecution.class },
			webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { ReactiveWebTestApplication.REACTIVE, PlainReactiveWebTestApplication.PROPAGATION,
					"idempotency.backend=memory", MESSAGE, PrincipalScopeTest.EXCLUDE })
	class WithoutContextPropagation extends Refused {

		@BeforeEach
		void turnedOffSinceTheStart() {
			Hooks.disableAutomaticContextPropagation();
		}

		@Test
		void theCallIsRefusedNamingContextPropagation() {
			String message = refused("k-unbound");
			assertThat(message).contains("thread " + BlockingExecution.THREADS)
				.contains("The request is not bound to it")
				.contains("spring.reactor.context-propagation=auto")
				.contains("Hooks.enableAutomaticContextPropagation()");
		}

	}

	/** The checks both cases share. */
	abstract static class Refused {

		@LocalServerPort
		int port;

		@Autowired
		PaymentsProbe payments;

		@Autowired
		IdempotencyStore store;

		@Autowired
		ReactiveWebTestApplication.StoreCallThreads threads;

		/**
		 * Posts a payment that is refused.
		 * @param key its idempotency key
		 * @return the refusal's message
		 */
		String refused(String key) {
			HttpResponse<byte[]> response = new HttpClients(this.port).post("/payments",
					"{\"account\":\"refused\",\"amount\":1}", "Idempotency-Key", key);
			String body = new String(response.body(), StandardCharsets.UTF_8);
			assertThat(response.statusCode()).isEqualTo(500);
			assertThat(body).contains("@Idempotent on " + PlainReactiveWebTestApplication.Payments.class.getName()
					+ ".pay, a WebFlux handler method with a plain result, cannot run on thread ")
				.contains("nothing was run or stored");
			assertThat(this.payments.executions("refused")).isZero();
			assertThat(this.store.find(new RecordId("payments", "-|" + key))).isEmpty();
			assertThat(this.threads.check().violations()).isEmpty();
			return body;
		}

	}

}
