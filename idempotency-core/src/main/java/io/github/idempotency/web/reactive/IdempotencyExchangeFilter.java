package io.github.idempotency.web.reactive;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Makes a WebFlux request readable by {@link ReactiveHandlerMethodIdempotency}: its body
 * is digested as it is read ({@link DigestedRequest}), and the exchange is put in the
 * Reactor context of the chain, where an {@code @Idempotent} handler method's result
 * finds it. Ordered late ({@code LOWEST_PRECEDENCE - 10}), after Spring Security's filter
 * chain, so that the exchange it hands over carries the authenticated principal.
 */
public class IdempotencyExchangeFilter implements WebFilter, Ordered {

	private static final String EXCHANGE = IdempotencyExchangeFilter.class.getName() + ".exchange";

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE - 10;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerWebExchange digested = exchange.mutate().request(new DigestedRequest(exchange.getRequest())).build();
		return chain.filter(digested).contextWrite((context) -> context.put(EXCHANGE, digested));
	}

	/**
	 * The exchange of the request whose chain a subscriber runs in.
	 * @param context the subscriber's context
	 * @return the exchange, or {@code null} outside a request that went through this filter
	 */
	static @Nullable ServerWebExchange exchange(ContextView context) {
		return context.getOrDefault(EXCHANGE, null);
	}

}
