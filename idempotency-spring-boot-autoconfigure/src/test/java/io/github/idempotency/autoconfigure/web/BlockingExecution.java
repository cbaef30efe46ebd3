package io.github.idempotency.autoconfigure.web;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * WebFlux blocking execution for the tests: handler methods with plain results are called
 * on a pool of platform threads (Java 17 has no virtual threads), large enough for racing
 * duplicates to wait. A class of its own, not nested in a test application, where Spring
 * would register it with the application.
 */
@Configuration(proxyBeanMethods = false)
class BlockingExecution {

	/** The prefix of the names of the blocking executor's threads. */
	static final String THREADS = "blocking-handler-";

	@Bean
	ThreadPoolTaskExecutor blockingHandlerExecutor() {
		ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
		executor.setCorePoolSize(32);
		executor.setThreadNamePrefix(THREADS);
		return executor;
	}

	@Bean
	WebFluxConfigurer blockingExecutionConfigurer(ThreadPoolTaskExecutor blockingHandlerExecutor) {
		return new WebFluxConfigurer() {

			@Override
			public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
				configurer.setExecutor(blockingHandlerExecutor);
			}

		};
	}

}
