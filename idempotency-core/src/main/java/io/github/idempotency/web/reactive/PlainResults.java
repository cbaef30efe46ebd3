package io.github.idempotency.web.reactive;

import java.util.Collection;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * What a WebFlux handler method with a plain result needs, and the messages that say so: a
 * thread of WebFlux's blocking execution to be called on, and Reactor's automatic context
 * propagation, which restores its request there ({@code io.micrometer:context-propagation}
 * on the class path). Checked at start where it can be, at each call where only the call
 * can tell (the thread), before anything runs or is stored.
 */
final class PlainResults {

	private static final String CONTEXT_REGISTRY = "io.micrometer.context.ContextRegistry";

	private static final String PROPAGATION = "Reactor's automatic context propagation (on Spring Boot "
			+ "spring.reactor.context-propagation=auto, else Hooks.enableAutomaticContextPropagation() before the "
			+ "application starts)";

	private static final String BLOCKING_EXECUTION = "WebFlux blocking execution "
			+ "(WebFluxConfigurer#configureBlockingExecution with an executor, or on Spring Boot with Java 21+ "
			+ "spring.threads.virtual.enabled=true)";

	private PlainResults() {
	}

	/**
	 * Fails a method's adaptation when the context-propagation library is missing.
	 * @param returnType the method's return type, for the message
	 * @param classLoader where to look for the library
	 */
	static void requireLibrary(ResolvableType returnType, @Nullable ClassLoader classLoader) {
		if (!ClassUtils.isPresent(CONTEXT_REGISTRY, classLoader)) {
			throw new IllegalArgumentException("a WebFlux handler method returning " + returnType
					+ " needs io.micrometer:context-propagation on the class path, " + PROPAGATION + " and "
					+ BLOCKING_EXECUTION + ", or return a Mono (see docs/http.md)");
		}
	}

	static void checkPropagation(Collection<String> methods) {
		if (!methods.isEmpty() && !Hooks.isAutomaticContextPropagationEnabled()) {
			throw new IllegalStateException("@Idempotent on " + String.join(", ", methods)
					+ ", WebFlux handler methods with a plain result, needs " + PROPAGATION
					+ ", which is off: turn it on, or return a Mono (see docs/http.md)");
		}
	}

	/**
	 * The request a plain result's method is called for, on a thread that may block.
	 * @param name the method, for the message
	 * @throws IllegalStateException naming what to turn on, before anything runs
	 */
	static IdempotencyExchangeFilter.Request boundRequest(String name) {
		IdempotencyExchangeFilter.Request request = IdempotencyExchangeFilter.boundRequest();
		boolean nonBlocking = Schedulers.isInNonBlockingThread();
		if (!nonBlocking && request != null) {
			return request;
		}
		String thread = Thread.currentThread().getName();
		StringBuilder message = new StringBuilder("@Idempotent on ").append(name)
			.append(", a WebFlux handler method with a plain result, cannot run on thread ")
			.append(thread)
			.append("; nothing was run or stored. ");
		if (nonBlocking) {
			message.append("It is a non-blocking thread (an event loop), where the idempotency store must not be "
					+ "called: turn on ")
				.append(BLOCKING_EXECUTION)
				.append(", so that WebFlux calls the method on a thread that may block");
			if (request == null) {
				message.append(", and ").append(PROPAGATION);
			}
		}
		else {
			message.append("The request is not bound to it: turn on ")
				.append(PROPAGATION)
				.append(", with io.micrometer:context-propagation on the class path and the ")
				.append(IdempotencyExchangeFilter.class.getSimpleName())
				.append(" registered (the auto-configuration registers it)");
		}
		throw new IllegalStateException(message.append(" (see docs/http.md)").toString());
	}

}
