package io.github.idempotency.web;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.internal.PermanentFailures;
import io.github.idempotency.internal.http.ExchangeRun;
import io.github.idempotency.internal.http.HttpAnswer;
import org.springframework.http.HttpHeaders;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The response of a request that went through {@link IdempotencyResponseFilter}: passed
 * through as it is, until an {@code @Idempotent} handler method's run is claimed; from then
 * on its body is kept ({@link ContentCachingResponseWrapper}) until the run is settled with
 * what was written, whoever wrote it, and then sent to the client.
 */
final class ExchangeResponse extends HttpServletResponseWrapper {

	private static final String ATTRIBUTE = ExchangeResponse.class.getName();

	private final HttpServletResponse raw;

	private final List<String> storedHeaders;

	private @Nullable Capture capture;

	private @Nullable ExchangeRun run;

	private @Nullable CompletableFuture<?> settled;

	private final Duration retryAfter;

	ExchangeResponse(ServletRequest request, HttpServletResponse raw, List<String> storedHeaders,
			Duration retryAfter) {
		super(raw);
		this.raw = raw;
		this.storedHeaders = storedHeaders;
		this.retryAfter = retryAfter;
		request.setAttribute(ATTRIBUTE, this);
	}

	/**
	 * The response of a request, when it went through the filter.
	 * @param request the request
	 * @return its response, or {@code null}
	 */
	static @Nullable ExchangeResponse of(ServletRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof ExchangeResponse response) ? response : null;
	}

	/**
	 * Keeps what is written from now on, for the run of a claimed handler method.
	 * @param permanentFailures the method's {@code recordFailureFor} types
	 * @return the run, settled once the response is complete
	 */
	ExchangeRun capture(PermanentFailures permanentFailures) {
		if (this.run != null) {
			throw new IllegalStateException("A request runs one @Idempotent handler method: it was forwarded to another");
		}
		Capture capture = new Capture(this.raw);
		this.capture = capture;
		this.run = new ExchangeRun(permanentFailures);
		setResponse(capture);
		return this.run;
	}

	/**
	 * The request is processed: settles the run with what was written, then sends it.
	 * @throws IOException when the client cannot be written to (the run is settled)
	 */
	void complete() throws IOException {
		if (this.run == null || this.capture == null) {
			return;
		}
		this.run.answered(this.capture.answer(this.storedHeaders));
		if (this.settled != null && failure(this.settled) instanceof IdempotencyLeaseLostException) {
			// another request took the key over: its outcome is the key's, which a retry reads
			this.capture.reset();
			this.raw.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, this.retryAfter.toSeconds())));
			this.raw.sendError(HttpServletResponse.SC_CONFLICT, "Idempotency lease lost");
			return;
		}
		this.capture.copyBodyToResponse();
	}

	private static @Nullable Throwable failure(CompletableFuture<?> settled) {
		Throwable failure = settled.handle((value, ex) -> ex).getNow(null);
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/**
	 * What the engine answered for the run: once it settled, a lease lost (the answer was
	 * not stored, another request holds the key) is answered with a conflict.
	 */
	void settledBy(CompletableFuture<?> settled) {
		this.settled = settled;
	}

	/**
	 * The request failed past every exception handler: the container answers it with its
	 * error page, which is what the run stores.
	 */
	void failed() {
		if (this.run != null) {
			this.run.answered(HttpAnswer.sentError(HttpServletResponse.SC_INTERNAL_SERVER_ERROR, Map.of(),
					this.storedHeaders, null));
		}
	}

	/** The kept response: its body, and a {@code sendError} that leaves the body to the error page. */
	private static final class Capture extends ContentCachingResponseWrapper {

		private boolean sentError;

		private @Nullable String reason;

		Capture(HttpServletResponse response) {
			super(response);
		}

		@Override
		public void sendError(int status) throws IOException {
			this.sentError = true;
			super.sendError(status);
		}

		@Override
		public void sendError(int status, String message) throws IOException {
			this.sentError = true;
			this.reason = message;
			super.sendError(status, message);
		}

		HttpAnswer answer(List<String> storedHeaders) {
			Map<String, List<String>> headers = new LinkedHashMap<>();
			for (String name : getHeaderNames()) {
				headers.put(name, List.copyOf(getHeaders(name)));
			}
			String contentType = getContentType();
			if (contentType != null) {
				headers.put(HttpHeaders.CONTENT_TYPE, List.of(contentType));
			}
			return this.sentError ? HttpAnswer.sentError(getStatus(), headers, storedHeaders, this.reason)
					: HttpAnswer.of(getStatus(), headers, storedHeaders, getContentAsByteArray());
		}

	}

}
