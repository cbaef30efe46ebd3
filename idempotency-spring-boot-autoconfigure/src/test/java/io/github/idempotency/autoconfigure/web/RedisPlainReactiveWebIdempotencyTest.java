package io.github.idempotency.autoconfigure.web;

import java.util.UUID;

import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * WebFlux handler methods with plain results on the redis backend: every store call on the
 * blocking executor's threads.
 */
@SpringBootTest(classes = { PlainReactiveWebTestApplication.class, BlockingExecution.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, ReactiveWebTestApplication.PROBLEM_DETAILS,
				PlainReactiveWebTestApplication.PROPAGATION, "idempotency.backend=redis",
				"idempotency.web.principal=#request.headers.getFirst('X-User')", PrincipalScopeTest.EXCLUDE })
class RedisPlainReactiveWebIdempotencyTest extends PlainReactiveWebIdempotencyTest {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", TestServers::redisUrl);
		registry.add("idempotency.redis.key-prefix", () -> "webflux-plain-test-" + UUID.randomUUID());
	}

	@Override
	protected String backend() {
		return "redis";
	}

}
