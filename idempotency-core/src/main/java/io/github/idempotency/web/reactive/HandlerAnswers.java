package io.github.idempotency.web.reactive;

import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Writes a claimed run's answer with WebFlux's own means, as the {@code DispatcherHandler}
 * would, onto the exchange whose response keeps it ({@link ExchangeResponse}): a handler
 * method's value through the result handlers, a permanent failure through the
 * {@code @ControllerAdvice} exception handlers, else the error handling
 * ({@code WebExceptionHandler}s: Spring Boot's error page). The run does it itself, so
 * that its answer does not depend on a client that may have gone away.
 */
final class HandlerAnswers {

	private final BeanFactory beanFactory;

	HandlerAnswers(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	/**
	 * Writes a handler method's value as WebFlux writes it.
	 * @param exchange the exchange the method was called with
	 * @param value the value, in the method's declared type (a {@code Mono}, or a plain
	 * value)
	 * @return when it is written
	 */
	Mono<Void> value(ServerWebExchange exchange, @Nullable Object value) {
		if (!(exchange.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE) instanceof HandlerMethod method)) {
			return Mono.error(new IllegalStateException("The exchange names no handler method to write the value of"));
		}
		HandlerResult result = new HandlerResult(method, value, method.getReturnType(), new BindingContext());
		return resultHandlers().stream()
			.filter((handler) -> handler.supports(result))
			.findFirst()
			.map((handler) -> handler.handleResult(exchange, result))
			.orElseGet(Mono::empty);
	}

	/**
	 * Writes the application's answer to a permanent failure: a {@code @ControllerAdvice}
	 * exception handler's, else the error handling's. The controller's own
	 * {@code @ExceptionHandler} methods are not asked (WebFlux keeps them out of reach); a
	 * failure one of them handles is answered with nothing written.
	 * @param exchange the exchange the method was called with
	 * @param failure what the method threw
	 * @param ownHandlers the controller's own exception handlers
	 * @return when it is written; empty when nothing answered (what went wrong added to
	 * {@code failure})
	 */
	Mono<Void> failure(ServerWebExchange exchange, Throwable failure, ExceptionHandlerMethodResolver ownHandlers) {
		if (ownHandlers.resolveMethodByThrowable(failure) != null) {
			return Mono.empty();
		}
		RequestMappingHandlerAdapter handlers = this.beanFactory.getBeanProvider(RequestMappingHandlerAdapter.class)
			.getIfAvailable();
		List<HandlerResultHandler> resultHandlers = resultHandlers();
		Mono<Void> handled = (handlers != null) ? handlers.handleError(exchange, failure)
			.flatMap((result) -> resultHandlers.stream()
				.filter((handler) -> handler.supports(result))
				.findFirst()
				.map((handler) -> handler.handleResult(exchange, result))
				.orElseGet(() -> Mono.error(failure))) : Mono.error(failure);
		for (WebExceptionHandler errorHandler : this.beanFactory.getBeanProvider(WebExceptionHandler.class)
			.orderedStream()
			.toList()) {
			handled = handled.onErrorResume((ex) -> errorHandler.handle(exchange, ex));
		}
		return handled.onErrorResume((other) -> {
			if (other != failure) {
				failure.addSuppressed(other);
			}
			return Mono.empty();
		});
	}

	private List<HandlerResultHandler> resultHandlers() {
		return this.beanFactory.getBeanProvider(HandlerResultHandler.class).orderedStream().toList();
	}

}
