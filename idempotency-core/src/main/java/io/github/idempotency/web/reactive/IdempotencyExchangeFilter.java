package io.github.idempotency.web.reactive;

import java.util.Collection;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import io.github.idempotency.internal.http.BoundExchange;
import io.github.idempotency.internal.http.StoredHeaders;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Makes a WebFlux request readable by {@link ReactiveHandlerMethodIdempotency}: its body
 * is digested as it is read ({@link DigestedRequest}), its response passed through until a
 * run is claimed and then kept until the run is settled ({@link ExchangeResponse}), and
 * the exchange is put in the
 * Reactor context of the chain, where an {@code @Idempotent} handler method's {@code Mono}
 * finds it, and from where Reactor's automatic context propagation restores it on the
 * thread that calls a handler method with a plain result. Ordered late
 * ({@code LOWEST_PRECEDENCE - 10}), after Spring Security's filter chain, so that the
 * exchange it hands over carries the authenticated principal.
 */
public class IdempotencyExchangeFilter implements WebFilter, Ordered {

	private final List<String> storedHeaders;

	/**
	 * Creates the filter.
	 * @param storedHeaders the response headers stored and replayed
	 */
	public IdempotencyExchangeFilter(Collection<String> storedHeaders) {
		this.storedHeaders = StoredHeaders.allowed(storedHeaders);
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE - 10;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ExchangeResponse response = new ExchangeResponse(exchange.getResponse(), this.storedHeaders);
		ServerWebExchange digested = exchange.mutate()
			.request(new DigestedRequest(exchange.getRequest()))
			.response(response)
			.build();
		response.bindTo(digested);
		// the chain's context goes with the exchange: a plain handler method reads the principal in it
		return Mono.deferContextual((context) -> chain.filter(digested)
			// a recorded failure handed on to the method's transaction, once its answer was sent
			.onErrorResume((ex) -> response.isAnswered(), (ex) -> Mono.empty())
			.contextWrite((inner) -> inner.put(BoundExchange.KEY, new Request(digested, context))));
	}

	/**
	 * The request whose chain a subscriber runs in.
	 * @param context the subscriber's context
	 * @return the request, or {@code null} outside a request that went through this filter
	 */
	static @Nullable Request request(ContextView context) {
		return context.getOrDefault(BoundExchange.KEY, null);
	}

	/**
	 * The request bound to the current thread by Reactor's automatic context propagation.
	 * @return the request, or {@code null} when none is bound
	 */
	static @Nullable Request boundRequest() {
		return (BoundExchange.current() instanceof Request request) ? request : null;
	}

	/**
	 * A request that went through the filter.
	 * @param exchange the exchange, its body digested
	 * @param context the Reactor context of its chain (Spring Security's context among
	 * others)
	 */
	record Request(ServerWebExchange exchange, ContextView context) {
	}

}
