package io.github.idempotency.autoconfigure.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/**
 * On WebFlux too, a store that cannot be reached fails closed: 503 with
 * {@code Retry-After}, as a problem, and the handler method does not run.
 */
@SpringBootTest(classes = { ReactiveWebTestApplication.class, StoreUnavailableWebTest.Unreachable.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, "idempotency.web.retry-after=5s",
				PrincipalScopeTest.EXCLUDE })
class ReactiveStoreUnavailableWebTest extends StoreUnavailableWebTest {

}
