package io.github.idempotency.autoconfigure.web;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
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
import org.springframework.boot.reactor.autoconfigure.ReactorAutoConfiguration;
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
	void aPlainResultFailsTheStartWithoutAutomaticContextPropagation() {
		// its request could not be found on the thread that calls it: every call would fail
		Hooks.disableAutomaticContextPropagation();
		this.reactive.withUserConfiguration(PlainHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("@Idempotent on " + PlainController.class.getName() + ".run")
				.hasStackTraceContaining("needs Reactor's automatic context propagation")
				.hasStackTraceContaining("spring.reactor.context-propagation=auto"));
	}

	@Test
	void aPlainResultFailsTheStartWithoutTheContextPropagationLibrary() {
		this.reactive.withClassLoader(new FilteredClassLoader("io.micrometer.context."))
			.withUserConfiguration(PlainEntityHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("PlainEntityController.run")
				.hasStackTraceContaining("returning org.springframework.http.ResponseEntity<java.lang.String> needs "
						+ "io.micrometer:context-propagation on the class path"));
	}

	@Test
	void aPlainResultStartsWithAutomaticContextPropagation() {
		try {
			this.reactive.withConfiguration(AutoConfigurations.of(ReactorAutoConfiguration.class))
				.withPropertyValues("spring.reactor.context-propagation=auto")
				.withUserConfiguration(PlainHandler.class, PlainEntityHandler.class)
				.run((context) -> assertThat(context).hasNotFailed());
		}
		finally {
			Hooks.disableAutomaticContextPropagation();
		}
	}

	@Test
	void anotherAsynchronousResultFailsTheStartNamingTheMonoToReturn() {
		this.reactive.withUserConfiguration(FutureHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("FutureController.run")
				.hasStackTraceContaining("returning java.util.concurrent.CompletableFuture<java.lang.String> is not "
						+ "supported: return a Mono"));
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

	@Test
	void aMethodTakingPartsWithoutAPayloadFailsTheStartNamingPayload() {
		this.reactive.withUserConfiguration(UploadHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("UploadController.upload")
				.hasStackTraceContaining("takes the parts of a multipart request")
				.hasStackTraceContaining("payload"));
	}

	@Configuration(proxyBeanMethods = false)
	static class UploadHandler {

		@Bean
		UploadController uploadController() {
			return new UploadController();
		}

	}

	@RestController
	static class UploadController {

		@PostMapping("/uploads")
		@Idempotent
		Mono<String> upload(@org.springframework.web.bind.annotation.RequestPart("file")
				Mono<org.springframework.http.codec.multipart.FilePart> file) {
			return file.map(org.springframework.http.codec.multipart.FilePart::filename);
		}

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

	/** Public: a class loader that hides a library proxies it from another runtime package. */
	@RestController
	public static class PlainEntityController {

		@PostMapping("/plain-entity")
		@Idempotent
		public ResponseEntity<String> run() {
			return ResponseEntity.ok("ran");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FutureHandler {

		@Bean
		FutureController futureController() {
			return new FutureController();
		}

	}

	@RestController
	static class FutureController {

		@PostMapping("/future")
		@Idempotent
		CompletableFuture<String> run() {
			return CompletableFuture.completedFuture("ran");
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
