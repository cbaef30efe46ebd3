package io.github.idempotency.sample.webflux;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.idempotency.store.IdempotencyStore;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * A payment API on WebFlux and R2DBC protected by the idempotency starter: H2 in memory
 * through {@code r2dbc-h2}, no JDBC {@code DataSource}, so the store is the r2dbc one.
 */
@SpringBootApplication
public class SampleWebFluxApplication {

	private static final Log logger = LogFactory.getLog(SampleWebFluxApplication.class);

	public static void main(String[] args) {
		SpringApplication.run(SampleWebFluxApplication.class, args);
	}

	/**
	 * Logs the store the starter chose: {@code r2dbc} here, with a {@code ConnectionFactory}
	 * and no {@code DataSource}.
	 * @param store the store of the records
	 * @return the listener
	 */
	@Bean
	ApplicationListener<ApplicationReadyEvent> idempotencyBackendLog(IdempotencyStore store) {
		return (event) -> logger.info("idempotency backend: " + store.backend());
	}

}
