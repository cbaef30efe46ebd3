package io.github.idempotency.autoconfigure.web;

import io.github.idempotency.web.HandlerMethodIdempotency;
import io.github.idempotency.web.IdempotencyProblemHandler;
import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyWebMvcAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which methods may leave the key out, and when the web support is configured.
 */
class HandlerMethodIdempotencyStartTest {

	private final WebApplicationContextRunner web = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyWebMvcAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void aHandlerMethodMayLeaveTheKeyOut() {
		this.web.withUserConfiguration(Handler.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(HandlerMethodIdempotency.class);
			assertThat(context).hasSingleBean(IdempotencyProblemHandler.class);
		});
	}

	@Test
	void anyOtherMethodWithoutAKeyFailsTheStart() {
		this.web.withUserConfiguration(Service.class).run((context) -> assertThat(context).getFailure()
			.hasStackTraceContaining("KeylessService.run")
			.hasStackTraceContaining("'key' must not be empty"));
	}

	@Test
	void withoutAWebApplicationAHandlerMethodNeedsAKeyToo() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
					IdempotencyAutoConfiguration.class, IdempotencyWebMvcAutoConfiguration.class))
			.withPropertyValues("idempotency.backend=memory")
			.withUserConfiguration(Handler.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("KeylessController.run")
				.hasStackTraceContaining("'key' must not be empty"));
	}

	@Test
	void theWebSupportCanBeTurnedOff() {
		this.web.withPropertyValues("idempotency.web.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(HandlerMethodIdempotency.class)
				.doesNotHaveBean(IdempotencyProblemHandler.class));
	}

	@Test
	void aMalformedPrincipalExpressionFailsTheStart() {
		this.web.withPropertyValues("idempotency.web.principal=#request.(")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("idempotency.web.principal is not a valid SpEL expression"));
	}

	@Test
	void aStreamingResultFailsTheStartSayingWhatToReturn() {
		this.web.withUserConfiguration(Streaming.class).run((context) -> assertThat(context).getFailure()
			.hasStackTraceContaining("StreamingController.events")
			.hasStackTraceContaining("a stream has no single response to store and replay"));
		this.web.withUserConfiguration(StreamedBody.class).run((context) -> assertThat(context).getFailure()
			.hasStackTraceContaining("StreamedBodyController.download")
			.hasStackTraceContaining("a stream has no single response to store and replay"));
	}

	@Test
	void aMethodTakingPartsWithoutAPayloadFailsTheStartNamingPayload() {
		this.web.withUserConfiguration(Uploads.class).run((context) -> assertThat(context).getFailure()
			.hasStackTraceContaining("UploadController.upload")
			.hasStackTraceContaining("takes the parts of a multipart request")
			.hasStackTraceContaining("payload"));
	}

	@Configuration(proxyBeanMethods = false)
	static class Uploads {

		@Bean
		UploadController uploadController() {
			return new UploadController();
		}

	}

	@RestController
	static class UploadController {

		@PostMapping("/uploads")
		@Idempotent
		String upload(@org.springframework.web.bind.annotation.RequestPart("file")
				org.springframework.web.multipart.MultipartFile file) {
			return file.getOriginalFilename();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Streaming {

		@Bean
		StreamingController streamingController() {
			return new StreamingController();
		}

	}

	@RestController
	static class StreamingController {

		@PostMapping("/events")
		@Idempotent
		org.springframework.web.servlet.mvc.method.annotation.SseEmitter events() {
			return new org.springframework.web.servlet.mvc.method.annotation.SseEmitter();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class StreamedBody {

		@Bean
		StreamedBodyController streamedBodyController() {
			return new StreamedBodyController();
		}

	}

	@RestController
	static class StreamedBodyController {

		@PostMapping("/download")
		@Idempotent
		org.springframework.http.ResponseEntity<org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody> download() {
			return org.springframework.http.ResponseEntity.ok((out) -> out.write(1));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handler {

		@Bean
		KeylessController keylessController() {
			return new KeylessController();
		}

	}

	@RestController
	static class KeylessController {

		@PostMapping("/keyless")
		@Idempotent
		String run() {
			return "ran";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Service {

		@Bean
		KeylessService keylessService() {
			return new KeylessService();
		}

	}

	static class KeylessService {

		@Idempotent
		public String run() {
			return "ran";
		}

	}

}
