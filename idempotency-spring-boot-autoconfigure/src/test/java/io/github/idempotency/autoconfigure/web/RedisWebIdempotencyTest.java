package io.github.idempotency.autoconfigure.web;

import java.util.UUID;

import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Spring MVC HTTP behaviour on the redis backend.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=redis", "idempotency.web.principal=#request.getHeader('X-User')",
				PrincipalScopeTest.EXCLUDE })
class RedisWebIdempotencyTest extends WebIdempotencyTest {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", TestServers::redisUrl);
		// the keys are fixed: each run has its own prefix
		registry.add("idempotency.redis.key-prefix", () -> "webmvc-test-" + UUID.randomUUID());
	}

	@Override
	protected String backend() {
		return "redis";
	}

}
