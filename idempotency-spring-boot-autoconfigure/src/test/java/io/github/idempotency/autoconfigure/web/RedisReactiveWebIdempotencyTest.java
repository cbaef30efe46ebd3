package io.github.idempotency.autoconfigure.web;

import java.util.UUID;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotency.testservers.TestServers;

/**
 * The WebFlux HTTP behaviour on the redis backend: every store call on the bounded
 * scheduler (the store uses Lettuce's synchronous API there).
 */
@SpringBootTest(classes = ReactiveWebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				"idempotency.backend=redis",
				"idempotency.web.principal=#request.headers.getFirst('X-User')", PrincipalScopeTest.EXCLUDE })
class RedisReactiveWebIdempotencyTest extends ReactiveWebIdempotencyTest {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", TestServers::redisUrl);
		// the keys are fixed: each run has its own prefix
		registry.add("idempotency.redis.key-prefix", () -> "webflux-test-" + UUID.randomUUID());
	}

	@Override
	protected String backend() {
		return "redis";
	}

}
