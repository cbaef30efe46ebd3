package io.github.idempotency.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletResponse;

import io.github.idempotency.internal.http.HttpAnswer;

/**
 * A stored answer to write instead of anything the handler method's call would have given:
 * it leaves the method as an exception without a stack trace, so that nothing of the
 * application writes the response, and {@link CapturedFailureResolver} writes it.
 */
final class ReplayedAnswer extends RuntimeException {

	private final transient HttpAnswer answer;

	private final String replayedHeader;

	ReplayedAnswer(HttpAnswer answer, String replayedHeader) {
		super("a replay of a stored answer", null, false, false);
		this.answer = answer;
		this.replayedHeader = replayedHeader;
	}

	/**
	 * Writes the stored answer, marked as replayed: its status, headers and body, or its
	 * {@code sendError}, which the error page answers as it did the first time.
	 */
	void writeTo(HttpServletResponse response) throws IOException {
		this.answer.headers().forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
		response.setHeader(this.replayedHeader, "true");
		if (this.answer.sentError()) {
			if (this.answer.reason() != null) {
				response.sendError(this.answer.status(), this.answer.reason());
			}
			else {
				response.sendError(this.answer.status());
			}
			return;
		}
		response.setStatus(this.answer.status());
		response.setContentLength(this.answer.body().length);
		response.getOutputStream().write(this.answer.body());
	}

}
