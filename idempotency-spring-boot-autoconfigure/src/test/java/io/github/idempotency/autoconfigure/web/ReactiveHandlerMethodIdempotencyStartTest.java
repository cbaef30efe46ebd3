package io.github.idempotency.autoconfigure.web;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.web.HandlerMethodIdempotency;
import io.github.idempotency.web.IdempotencyProblemHandler;
import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyWebFluxAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyWebMvcAutoConfiguration;
import io.github.idempotency.web.reactive.IdempotencyExchangeFilter;
import io.github.idempotency.web.reactive.ReactiveHandlerMethodIdempotency;
import io.github.idempotency.web.reactive.ReactiveIdempotencyProblemHandler;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.DispatcherHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the WebFlux support is configured, and which handler methods it takes.
 */
class ReactiveHandlerMethodIdempotencyStartTest {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(AopAutoConfiguration.class,
			JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class,
			IdempotencyWebMvcAutoConfiguration.class, IdempotencyWebFluxAutoConfiguration.class);

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(CONFIGURATIONS)
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void aReactiveApplicationGetsTheWebFluxSupportOnly() {
		this.reactive.withUserConfiguration(MonoHandler.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(ReactiveHandlerMethodIdempotency.class)
				.hasSingleBean(IdempotencyExchangeFilter.class)
				.hasSingleBean(ReactiveIdempotencyProblemHandler.class)
				.doesNotHaveBean(HandlerMethodIdempotency.class)
				.doesNotHaveBean(IdempotencyProblemHandler.class);
		});
	}

	@Test
	void aServletApplicationGetsTheSpringMvcSupportOnly() {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("idempotency.backend=memory")
			.run((context) -> assertThat(context).hasSingleBean(HandlerMethodIdempotency.class)
				.doesNotHaveBean(ReactiveHandlerMethodIdempotency.class)
				.doesNotHaveBean(IdempotencyExchangeFilter.class));
	}

	@Test
	void withoutWebFluxTheSupportBacksOff() {
		this.reactive.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveHandlerMethodIdempotency.class));
	}

	@Test
	void theWebSupportCanBeTurnedOff() {
		this.reactive.withPropertyValues("idempotency.web.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveHandlerMethodIdempotency.class)
				.doesNotHaveBean(IdempotencyExchangeFilter.class));
	}

	@Test
	void aPlainResultFailsTheStartNamingTheMonoToReturn() {
		// a plain result runs on an event loop, where the store must not be called
		this.reactive.withUserConfiguration(PlainHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("PlainController.run")
				.hasStackTraceContaining("returning java.lang.String is not supported: return Mono<String>"));
	}

	@Test
	void aPlainResultFailsTheStartWithBlockingExecutionToo() {
		// with virtual threads Boot runs it on an executor thread, which carries nothing of the request
		this.reactive.withPropertyValues("spring.threads.virtual.enabled=true")
			.withUserConfiguration(PlainHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("with or without blocking execution (virtual threads)"));
	}

	@Test
	void aPlainResponseEntityFailsTheStartNamingTheMonoToReturn() {
		this.reactive.withUserConfiguration(PlainEntityHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("return Mono<org.springframework.http.ResponseEntity<String>>"));
	}

	@Test
	void aFluxFailsTheStart() {
		this.reactive.withUserConfiguration(FluxHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("returning a Flux is not supported")
				.hasStackTraceContaining("flux.collectList()"));
	}

	@Test
	void theSchedulerHasAtLeastOneThread() {
		this.reactive.withPropertyValues("idempotency.web.reactive.scheduler-threads=0")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("idempotency.web.reactive.scheduler-threads must be at least 1"));
	}

	@Configuration(proxyBeanMethods = false)
	static class MonoHandler {

		@Bean
		MonoController monoController() {
			return new MonoController();
		}

	}

	@RestController
	static class MonoController {

		@PostMapping("/keyless")
		@Idempotent
		Mono<String> run() {
			return Mono.just("ran");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PlainHandler {

		@Bean
		PlainController plainController() {
			return new PlainController();
		}

	}

	@RestController
	static class PlainController {

		@PostMapping("/plain")
		@Idempotent
		String run() {
			return "ran";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PlainEntityHandler {

		@Bean
		PlainEntityController plainEntityController() {
			return new PlainEntityController();
		}

	}

	@RestController
	static class PlainEntityController {

		@PostMapping("/plain-entity")
		@Idempotent
		ResponseEntity<String> run() {
			return ResponseEntity.ok("ran");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FluxHandler {

		@Bean
		FluxController fluxController() {
			return new FluxController();
		}

	}

	@RestController
	static class FluxController {

		@PostMapping("/flux")
		@Idempotent
		Flux<String> run() {
			return Flux.just("ran");
		}

	}

}
