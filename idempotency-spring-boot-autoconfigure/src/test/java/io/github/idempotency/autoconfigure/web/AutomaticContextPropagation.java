package io.github.idempotency.autoconfigure.web;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.core.publisher.Hooks;

/**
 * Turns Reactor's automatic context propagation on for a test class, and off again after
 * it: the switch is global to the JVM, and the other tests run with it off, as an
 * application does by default. Spring Boot turns it on when it creates a context with
 * {@code spring.reactor.context-propagation=auto}, but a context the test framework
 * cached is not created again: the class turns it on itself.
 */
final class AutomaticContextPropagation implements BeforeAllCallback, AfterAllCallback {

	@Override
	public void beforeAll(ExtensionContext context) {
		Hooks.enableAutomaticContextPropagation();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		Hooks.disableAutomaticContextPropagation();
	}

}
