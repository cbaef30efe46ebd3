package io.github.idempotency.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every property the starter binds is in the configuration metadata an IDE completes
 * from, with a description and, unless it has none on purpose, its default.
 */
class ConfigurationMetadataTest {

	/**
	 * Unset on purpose: detected (or, lease-renewal-interval, derived from lease-ttl;
	 * scheduler-threads, from the CPU cores) when absent.
	 */
	private static final Set<String> WITHOUT_DEFAULT = Set.of("idempotency.backend", "idempotency.jdbc.platform",
			"idempotency.web.principal", "idempotency.lease-renewal-interval",
			"idempotency.web.reactive.scheduler-threads", "management.endpoint.idempotency.roles");

	@Test
	void everyPropertyHasADescriptionAndADefault() throws IOException {
		List<String> names = new ArrayList<>();
		for (JsonNode property : metadata().get("properties")) {
			String name = property.get("name").asString();
			if (!name.startsWith("idempotency.") && !name.startsWith("management.endpoint.idempotency.")) {
				continue;
			}
			names.add(name);
			assertThat(property.path("description").asString("")).as("description of " + name).isNotBlank();
			if (!WITHOUT_DEFAULT.contains(name)) {
				assertThat(property.has("defaultValue")).as("default of " + name).isTrue();
			}
		}
		assertThat(names).contains("idempotency.enabled", "idempotency.backend", "idempotency.lease-ttl",
				"idempotency.lease-renewal", "idempotency.lease-renewal-interval", "idempotency.retention", "idempotency.on-in-progress",
				"idempotency.wait-timeout", "idempotency.store-unavailable", "idempotency.max-key-length",
				"idempotency.aspect-order", "idempotency.jdbc.table-name", "idempotency.jdbc.initialize-schema",
				"idempotency.jdbc.lock-timeout", "idempotency.jdbc.cleanup.interval",
				"idempotency.jdbc.cleanup.batch-size", "idempotency.redis.key-prefix", "idempotency.hybrid.cache-ttl",
				"idempotency.memory.cleanup-interval", "idempotency.observation.include-key",
				"idempotency.web.key-header", "idempotency.web.reactive.scheduler-threads",
				"management.endpoint.idempotency.show-values");
	}

	private static JsonNode metadata() throws IOException {
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			return JsonMapper.builder().build().readTree(in);
		}
	}

}
