package io.github.idempotency.sample;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code servers} profile points the sample at PostgreSQL, where the jdbc store's
 * table is not created by default (only embedded databases get it): the profile creates it
 * at start, so the sample starts on an empty database instead of failing its table check.
 */
class ServersProfileTest {

	@Test
	void createsTheIdempotencyTableOnPostgres() throws Exception {
		StandardEnvironment environment = new StandardEnvironment();
		new YamlPropertySourceLoader().load("servers", new ClassPathResource("application-servers.yml"))
			.forEach(environment.getPropertySources()::addFirst);
		Binder binder = new Binder(ConfigurationPropertySources.get(environment));
		assertThat(binder.bind("spring.datasource.url", String.class).get()).startsWith("jdbc:postgresql:");
		assertThat(binder.bind("idempotency.backend", String.class).get()).isEqualTo("jdbc");
		assertThat(binder.bind("idempotency.jdbc.initialize-schema", String.class).get()).isEqualTo("always");
	}

}
