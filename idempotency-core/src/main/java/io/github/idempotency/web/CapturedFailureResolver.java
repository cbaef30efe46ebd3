package io.github.idempotency.web;

import java.io.IOException;
import java.io.UncheckedIOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers the first request of a recorded permanent failure with what the application's
 * exception handling answered when {@link HandlerMethodIdempotency} recorded it, so that
 * the handling runs once and the stored answer is the one the client got. The exception
 * itself still leaves the handler method (a transaction rolls back by its own rules) and
 * reaches the {@code DispatcherServlet}; this resolver, ordered first, answers only for
 * that exception, in that request.
 */
public final class CapturedFailureResolver implements HandlerExceptionResolver, Ordered {

	private static final String ATTRIBUTE = CapturedFailureResolver.class.getName() + ".captured";

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	static void capture(HttpServletRequest request, Throwable failure, CapturedResponse answer) {
		request.setAttribute(ATTRIBUTE, new Captured(failure, answer));
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (!(request.getAttribute(ATTRIBUTE) instanceof Captured captured) || captured.failure != ex) {
			return null;
		}
		request.removeAttribute(ATTRIBUTE);
		try {
			captured.answer.writeTo(response);
		}
		catch (IOException failure) {
			throw new UncheckedIOException(failure);
		}
		return new ModelAndView();
	}

	private record Captured(Throwable failure, CapturedResponse answer) {
	}

}
