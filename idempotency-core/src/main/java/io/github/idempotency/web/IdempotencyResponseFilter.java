package io.github.idempotency.web;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.github.idempotency.internal.http.StoredHeaders;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Lets {@link HandlerMethodIdempotency} store what the client of an {@code @Idempotent}
 * handler method received: the response is passed through untouched, unless such a
 * method's run is claimed; then its status, headers and body are kept as they are written
 * (by the return value, the method itself, an exception handler, the error page's
 * {@code sendError}), the run is settled with them, and only then are they sent. Ordered
 * late ({@code LOWEST_PRECEDENCE - 10}), inside Spring Security's filters.
 */
public class IdempotencyResponseFilter extends OncePerRequestFilter implements Ordered {

	private final List<String> storedHeaders;

	private final Duration retryAfter;

	/**
	 * Creates the filter.
	 * @param storedHeaders the response headers stored and replayed
	 * @param retryAfter the {@code Retry-After} of a run whose lease another request took
	 * over (a 409)
	 */
	public IdempotencyResponseFilter(Collection<String> storedHeaders, Duration retryAfter) {
		this.storedHeaders = StoredHeaders.allowed(storedHeaders);
		this.retryAfter = retryAfter;
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE - 10;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		ExchangeResponse exchange = new ExchangeResponse(request, response, this.storedHeaders, this.retryAfter);
		try {
			chain.doFilter(request, exchange);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			exchange.failed();
			throw ex;
		}
		exchange.complete();
	}

}
