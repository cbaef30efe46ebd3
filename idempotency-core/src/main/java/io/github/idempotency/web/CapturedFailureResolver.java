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
 * Writes a captured answer that {@link HandlerMethodIdempotency} replays to a duplicate
 * request, byte for byte: what the first request's client received, a permanent failure's
 * answer included. Ordered first: it answers only its own exception, which nothing else
 * handles.
 */
public final class CapturedFailureResolver implements HandlerExceptionResolver, Ordered {

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (!(ex instanceof ReplayedAnswer replayed)) {
			return null;
		}
		try {
			replayed.writeTo(response);
		}
		catch (IOException failure) {
			throw new UncheckedIOException(failure);
		}
		return new ModelAndView();
	}

}
