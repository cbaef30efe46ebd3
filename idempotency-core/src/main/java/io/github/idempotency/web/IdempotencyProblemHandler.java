package io.github.idempotency.web;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.internal.http.HttpAnswer;
import io.github.idempotency.internal.http.IdempotencyProblems;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers the idempotency exceptions of a request with RFC 9457 problem details, with the
 * status codes of the IETF draft "The Idempotency-Key HTTP Header Field": a missing or
 * invalid key 400, a key reused with another request 422, a key still in progress 409
 * (with {@code Retry-After}), a store that fails 503 (with {@code Retry-After}), a run
 * whose lease another request took over 409 ({@link IdempotencyProblems}). A replayed
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

	private final IdempotencyProblems problems;

	/**
	 * Creates the handler.
	 * @param keyHeader the request header that carries the key (named in the details)
	 * @param replayedHeader the response header that marks a replay
	 * @param retryAfter the {@code Retry-After} of a 409 and a 503
	 */
	public IdempotencyProblemHandler(String keyHeader, String replayedHeader, Duration retryAfter) {
		this.problems = new IdempotencyProblems(keyHeader, replayedHeader, retryAfter);
	}

	/**
	 * Answers an idempotency exception with its problem.
	 * @param ex a missing or invalid key, a key reused, a key in progress, a store that
	 * failed, a lease another request took over
	 * @return the problem
	 */
	@ExceptionHandler({ MissingIdempotencyKeyException.class, InvalidIdempotencyKeyException.class,
			IdempotencyKeyReusedException.class, IdempotencyInProgressException.class, IdempotencyStoreException.class,
			IdempotencyLeaseLostException.class })
	ResponseEntity<ProblemDetail> problem(IdempotencyException ex) {
		return this.problems.of(ex);
	}

	@ExceptionHandler(IdempotentFailureReplayedException.class)
	@Nullable ResponseEntity<?> failureReplayed(IdempotentFailureReplayedException ex, HttpServletResponse response)
			throws IOException {
		ResponseEntity<?> answer = this.problems.failureReplayed(ex);
		if (answer != null) {
			return answer;
		}
		// the error page answers, as it did the first time
		HttpAnswer sent = Objects.requireNonNull(RecordedHttpFailure.answerOf(ex));
		HttpHeaders headers = this.problems.replayedHeaders();
		sent.headers().forEach(headers::addAll);
		headers.forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
		if (sent.reason() != null) {
			response.sendError(sent.status(), sent.reason());
		}
		else {
			response.sendError(sent.status());
		}
		return null;
	}

}
