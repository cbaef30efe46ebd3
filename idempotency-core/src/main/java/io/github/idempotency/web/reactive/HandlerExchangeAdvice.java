package io.github.idempotency.web.reactive;

import org.jspecify.annotations.Nullable;

import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.server.ServerWebExchange;

/**
 * Hands {@link ReactiveHandlerMethodIdempotency} the exchange a handler method is called
 * with: the one every filter of the application and of Spring Security has passed on, whose
 * principal scopes the key. WebFlux keeps it from an advice around the method; a model
 * attribute method, called with it just before the handler method, puts it where the
 * exchange's every form finds it (its attributes).
 */
@ControllerAdvice
public class HandlerExchangeAdvice {

	private static final String ATTRIBUTE = HandlerExchangeAdvice.class.getName() + ".exchange";

	/**
	 * Keeps the exchange of the handler method about to be called.
	 * @param exchange the exchange
	 */
	@ModelAttribute
	public void handlerExchange(ServerWebExchange exchange) {
		exchange.getAttributes().put(ATTRIBUTE, exchange);
	}

	/**
	 * The exchange the handler method is called with.
	 * @param exchange the exchange in any of its forms
	 * @return the handler method's, or {@code null} when this advice did not run
	 */
	static @Nullable ServerWebExchange of(ServerWebExchange exchange) {
		return (exchange.getAttribute(ATTRIBUTE) instanceof ServerWebExchange handlerExchange) ? handlerExchange
				: null;
	}

}
