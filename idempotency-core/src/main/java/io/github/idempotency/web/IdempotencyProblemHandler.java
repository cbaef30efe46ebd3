package io.github.idempotency.web;

import java.time.Duration;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
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
 * (with {@code Retry-After}), a replayed permanent failure the status it was stored with.
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
	 * @param retryAfter the {@code Retry-After} of a 409
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
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, this.retryAfter.toSeconds())));
		return problem(HttpStatus.CONFLICT,
				"A request with this " + this.keyHeader + " is still being processed; retry later", headers);
	}

	@ExceptionHandler(IdempotentFailureReplayedException.class)
	ResponseEntity<ProblemDetail> failureReplayed(IdempotentFailureReplayedException ex) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(this.replayedHeader, "true");
		return problem(HttpStatusCode.valueOf(RecordedHttpFailure.statusOf(ex)),
				"The first request with this " + this.keyHeader + " failed permanently", headers);
	}

	private static ResponseEntity<ProblemDetail> problem(HttpStatusCode status, String detail, HttpHeaders headers) {
		return ResponseEntity.status(status).headers(headers).body(ProblemDetail.forStatusAndDetail(status, detail));
	}

}
