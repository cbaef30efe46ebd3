package io.github.idempotency.web.reactive;

import java.util.List;

import io.github.idempotency.internal.http.HttpAnswer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;

/**
 * What the application's exception handling (a {@code @ControllerAdvice} exception handler,
 * else the error handling, Spring Boot's error page) answered to a permanent failure of a
 * WebFlux handler method, as written once ({@link CapturingResponse}): the first request is
 * answered with it whole (by
 * {@link CapturedAnswerHandler}), and the record stores its allow-listed part. It travels
 * as an exception without a cause, so that no exception handler of the application meets
 * the failure a second time.
 */
final class CapturedAnswer extends RuntimeException {

	private final int status;

	private final HttpHeaders headers;

	private final byte[] body;

	CapturedAnswer(int status, HttpHeaders headers, byte[] body) {
		super("the answer to a recorded permanent failure", null, false, false);
		this.status = status;
		this.headers = headers;
		this.body = body;
	}

	int status() {
		return this.status;
	}

	/** The answer to store: the allow-listed headers only. */
	HttpAnswer toAnswer(List<String> storedHeaders) {
		return HttpAnswer.of(this.status, this.headers.asMultiValueMap(), storedHeaders, this.body);
	}

	/** The answer to the first request: every header written. */
	ResponseEntity<byte[]> toResponse() {
		return ResponseEntity.status(this.status).headers(this.headers).body(this.body);
	}

}
