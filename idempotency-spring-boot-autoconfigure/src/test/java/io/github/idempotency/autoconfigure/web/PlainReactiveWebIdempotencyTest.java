package io.github.idempotency.autoconfigure.web;

import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/**
 * Every HTTP behaviour of {@link WebIdempotencyTest}, on WebFlux with handler methods that
 * return plain results ({@code T}, {@code ResponseEntity<T>}, {@code void}): called on the
 * blocking executor's threads (a {@code ThreadPoolTaskExecutor}), the request restored
 * there by Reactor's automatic context propagation. After each test, no store call ran on
 * a non-blocking thread.
 */
@SpringBootTest(
		classes = { PlainReactiveWebTestApplication.class, BlockingExecution.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				PlainReactiveWebTestApplication.PROPAGATION, "idempotency.backend=memory",
				"idempotency.web.principal=#request.headers.getFirst('X-User')", PrincipalScopeTest.EXCLUDE })
@ExtendWith(AutomaticContextPropagation.class)
class PlainReactiveWebIdempotencyTest extends ReactiveWebIdempotencyTest {

}
