package io.github.idempotency.internal.http;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * The RFC 9457 problems that answer the idempotency exceptions of a request, the same on
 * both HTTP stacks, with the status codes of the IETF draft "The Idempotency-Key HTTP
 * Header Field": a missing or invalid key 400, a key reused with another request 422, a
 * key still in progress 409 (with {@code Retry-After}), a store that fails 503 (with
 * {@code Retry-After}), a run whose lease another request took over 409 (with
 * {@code Retry-After}: the key's outcome is that request's). The details name neither the
 * workflow nor the original exception, so that nothing of the server's inside reaches the
 * client.
 */
public final class IdempotencyProblems {

	private final String keyHeader;

	private final String replayedHeader;

	private final Duration retryAfter;

	/**
	 * Creates the problems.
	 * @param keyHeader the request header that carries the key (named in the details)
	 * @param replayedHeader the response header that marks a replay
	 * @param retryAfter the {@code Retry-After} of a 409 and a 503
	 */
	public IdempotencyProblems(String keyHeader, String replayedHeader, Duration retryAfter) {
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.retryAfter = retryAfter;
	}

	/**
	 * The problem that answers {@code ex}: a missing or invalid key, a key reused, a key in
	 * progress, a store that failed, a lease another request took over.
	 * @param ex what the request threw
	 * @return its problem
	 * @throws IllegalArgumentException for any other exception
	 */
	public ResponseEntity<ProblemDetail> of(IdempotencyException ex) {
		if (ex instanceof MissingIdempotencyKeyException) {
			return missingKey();
		}
		if (ex instanceof InvalidIdempotencyKeyException) {
			return invalidKey();
		}
		if (ex instanceof IdempotencyKeyReusedException) {
			return keyReused();
		}
		if (ex instanceof IdempotencyInProgressException) {
			return inProgress();
		}
		if (ex instanceof IdempotencyStoreException) {
			return storeFailed();
		}
		if (ex instanceof IdempotencyLeaseLostException) {
			return leaseLost();
		}
		throw new IllegalArgumentException("No problem answers " + ex.getClass().getName(), ex);
	}

	/** A missing key: 400. */
	public ResponseEntity<ProblemDetail> missingKey() {
		return problem(HttpStatus.BAD_REQUEST, "This request needs an " + this.keyHeader + " header",
				new HttpHeaders());
	}

	/** An invalid key: 400. */
	public ResponseEntity<ProblemDetail> invalidKey() {
		return problem(HttpStatus.BAD_REQUEST, "The " + this.keyHeader + " header is not a valid key",
				new HttpHeaders());
	}

	/** A key used before with another request: 422. */
	public ResponseEntity<ProblemDetail> keyReused() {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT,
				"The " + this.keyHeader + " was used before with a different request", new HttpHeaders());
	}

	/** A key another request is running: 409 with {@code Retry-After}. */
	public ResponseEntity<ProblemDetail> inProgress() {
		return problem(HttpStatus.CONFLICT,
				"A request with this " + this.keyHeader + " is still being processed; retry later", retryAfter());
	}

	/** A store that fails: 503 with {@code Retry-After}. */
	public ResponseEntity<ProblemDetail> storeFailed() {
		return problem(HttpStatus.SERVICE_UNAVAILABLE,
				"This request cannot be processed safely now; retry later with the same " + this.keyHeader,
				retryAfter());
	}

	/**
	 * A run that outlived its lease while another request took the key over: 409 with
	 * {@code Retry-After}. This run's effects may have happened, and so may the other's;
	 * the key's outcome is the other request's, which a retry with the same key reads.
	 */
	public ResponseEntity<ProblemDetail> leaseLost() {
		ResponseEntity<ProblemDetail> answer = problem(HttpStatus.CONFLICT, "This request took longer than its lease "
				+ "and another request with the same " + this.keyHeader + " took it over; its outcome is that "
				+ "request's: retry with the same " + this.keyHeader + " to read it", retryAfter());
		ProblemDetail body = answer.getBody();
		if (body != null) {
			body.setTitle("Idempotency lease lost");
		}
		return answer;
	}

	/**
	 * A replayed permanent failure: the stored answer, marked as replayed, or a problem
	 * with the stored status when no answer was stored.
	 * @param replayed the replayed failure
	 * @return the answer; {@code null} when the stored answer was the error page's (a
	 * {@code sendError}), which the stack answers itself
	 */
	public @Nullable ResponseEntity<?> failureReplayed(IdempotentFailureReplayedException replayed) {
		HttpHeaders headers = replayedHeaders();
		HttpAnswer answer = RecordedHttpFailure.answerOf(replayed);
		if (answer == null) {
			return problem(HttpStatusCode.valueOf(RecordedHttpFailure.statusOf(replayed)),
					"The first request with this " + this.keyHeader + " failed permanently", headers);
		}
		if (answer.sentError()) {
			return null;
		}
		answer.headers().forEach(headers::addAll);
		return ResponseEntity.status(answer.status()).headers(headers).body(answer.body());
	}

	/**
	 * The headers of a replay: the replayed header alone.
	 * @return new headers
	 */
	public HttpHeaders replayedHeaders() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(this.replayedHeader, "true");
		return headers;
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
