package io.github.idempotency.benchmarks;

import java.util.HashMap;
import java.util.Map;

import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Starts the small Spring Boot applications the benchmarks run in, with Boot's own
 * auto-configuration: the same Hikari pool, the same {@code LettuceConnectionFactory}, the
 * same {@code JsonMapper} for the starter, the hand-written baselines and the peers.
 */
final class BenchmarkContexts {

	private BenchmarkContexts() {
	}

	/**
	 * The starter on the memory store, with the {@link PaymentHandler} bean proxied.
	 * @return the running context
	 */
	static ConfigurableApplicationContext memory() {
		return run(Map.of("idempotency.backend", "memory"), MemoryApplication.class);
	}

	/**
	 * PostgreSQL and Redis clients only, for the baselines and the peers.
	 * @return the running context
	 */
	static ConfigurableApplicationContext servers() {
		return run(Servers.properties(), ServersApplication.class);
	}

	/**
	 * A MariaDB client only ({@link Servers#mariadb()}), for the baselines.
	 * @return the running context
	 */
	static ConfigurableApplicationContext mariadb() {
		return run(Map.of("spring.datasource.url", Servers.mariadb()), ServersApplication.class);
	}

	/**
	 * The starter on {@code backend}, with the PostgreSQL and Redis clients and the
	 * {@link PaymentHandler} bean proxied.
	 * @param backend the value of {@code idempotency.backend}
	 * @param properties more properties
	 * @return the running context
	 */
	static ConfigurableApplicationContext starter(String backend, Map<String, Object> properties) {
		Map<String, Object> all = new HashMap<>(Servers.properties());
		all.put("idempotency.backend", backend);
		all.putAll(properties);
		return run(all, StarterApplication.class);
	}

	private static ConfigurableApplicationContext run(Map<String, Object> properties, Class<?> source) {
		Map<String, Object> all = new HashMap<>(properties);
		all.put("logging.level.root", "WARN");
		all.put("idempotency.lease-renewal", "true");
		return new SpringApplicationBuilder(source).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties(all)
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ AopAutoConfiguration.class, JacksonAutoConfiguration.class,
			IdempotencyAutoConfiguration.class })
	static class MemoryApplication {

		@Bean
		PaymentHandler paymentHandler() {
			return new PaymentHandler();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ JacksonAutoConfiguration.class, DataSourceAutoConfiguration.class,
			DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
			JdbcTemplateAutoConfiguration.class, JdbcClientAutoConfiguration.class, DataRedisAutoConfiguration.class })
	static class ServersApplication {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ AopAutoConfiguration.class, JacksonAutoConfiguration.class,
			DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JdbcTemplateAutoConfiguration.class, JdbcClientAutoConfiguration.class,
			DataRedisAutoConfiguration.class, IdempotencyAutoConfiguration.class })
	static class StarterApplication {

		@Bean
		PaymentHandler paymentHandler() {
			return new PaymentHandler();
		}

	}

}
