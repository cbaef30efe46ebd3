package io.github.idempotency.autoconfigure.web;

import java.util.UUID;

import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What the client received, stored on the redis backend.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=redis", PrincipalScopeTest.EXCLUDE })
class RedisResponseCaptureWebTest extends ResponseCaptureWebTest {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.url", TestServers::redisUrl);
		registry.add("idempotency.redis.key-prefix", () -> "capture-test-" + UUID.randomUUID());
	}

}
