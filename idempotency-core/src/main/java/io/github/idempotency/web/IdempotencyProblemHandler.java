package io.github.idempotency.web;

import java.io.IOException;
import java.time.Duration;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers the idempotency exceptions of a request with RFC 9457 problem details, with the
 * status codes of the IETF draft "The Idempotency-Key HTTP Header Field": a missing or
 * invalid key 400, a key reused with another request 422, a key still in progress 409
 * (with {@code Retry-After}), a store that fails 503 (with {@code Retry-After}). A replayed
 * permanent failure is answered as the application's exception handling answered it the
 * first time (its status, allow-listed headers and body, or its {@code sendError}), or,
 * when that answer was not stored, with a problem with its status.
 * <p>
 * Ordered last: an application's own {@code @ControllerAdvice} that handles these
 * exceptions (or any of their supertypes) wins. The details name neither the workflow nor
 * the original exception, so that nothing of the server's inside reaches the client.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class IdempotencyProblemHandler {

	private final String keyHeader;

	private final String replayedHeader;

	private final Duration retryAfter;

	/**
	 * Creates the handler.
	 * @param keyHeader the request header that carries the key (named in the details)
	 * @param replayedHeader the response header that marks a replay
	 * @param retryAfter the {@code Retry-After} of a 409 and a 503
	 */
	public IdempotencyProblemHandler(String keyHeader, String replayedHeader, Duration retryAfter) {
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.retryAfter = retryAfter;
	}

	@ExceptionHandler(MissingIdempotencyKeyException.class)
	ResponseEntity<ProblemDetail> missingKey(MissingIdempotencyKeyException ex) {
		return problem(HttpStatus.BAD_REQUEST, "This request needs an " + this.keyHeader + " header", new HttpHeaders());
	}

	@ExceptionHandler(InvalidIdempotencyKeyException.class)
	ResponseEntity<ProblemDetail> invalidKey(InvalidIdempotencyKeyException ex) {
		return problem(HttpStatus.BAD_REQUEST, "The " + this.keyHeader + " header is not a valid key", new HttpHeaders());
	}

	@ExceptionHandler(IdempotencyKeyReusedException.class)
	ResponseEntity<ProblemDetail> keyReused(IdempotencyKeyReusedException ex) {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT,
				"The " + this.keyHeader + " was used before with a different request", new HttpHeaders());
	}

	@ExceptionHandler(IdempotencyInProgressException.class)
	ResponseEntity<ProblemDetail> inProgress(IdempotencyInProgressException ex) {
		return problem(HttpStatus.CONFLICT,
				"A request with this " + this.keyHeader + " is still being processed; retry later", retryAfter());
	}

	@ExceptionHandler(IdempotencyStoreException.class)
	ResponseEntity<ProblemDetail> storeFailed(IdempotencyStoreException ex) {
		return problem(HttpStatus.SERVICE_UNAVAILABLE,
				"This request cannot be processed safely now; retry later with the same " + this.keyHeader,
				retryAfter());
	}

	@ExceptionHandler(IdempotentFailureReplayedException.class)
	@Nullable ResponseEntity<?> failureReplayed(IdempotentFailureReplayedException ex, HttpServletResponse response)
			throws IOException {
		HttpHeaders headers = new HttpHeaders();
		headers.set(this.replayedHeader, "true");
		RecordedHttpFailure.Answer answer = RecordedHttpFailure.answerOf(ex);
		if (answer == null) {
			return problem(HttpStatusCode.valueOf(RecordedHttpFailure.statusOf(ex)),
					"The first request with this " + this.keyHeader + " failed permanently", headers);
		}
		answer.headers().forEach(headers::addAll);
		if (answer.sentError()) {
			// the error page answers, as it did the first time
			headers.forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
			if (answer.reason() != null) {
				response.sendError(answer.status(), answer.reason());
			}
			else {
				response.sendError(answer.status());
			}
			return null;
		}
		return ResponseEntity.status(answer.status()).headers(headers).body(answer.bytes());
	}

	private HttpHeaders retryAfter() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, this.retryAfter.toSeconds())));
		return headers;
	}

	private static ResponseEntity<ProblemDetail> problem(HttpStatusCode status, String detail, HttpHeaders headers) {
		return ResponseEntity.status(status).headers(headers).body(ProblemDetail.forStatusAndDetail(status, detail));
	}

}
