package io.github.idempotency.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What the starter loads by name, for ahead-of-time processing and native images: the
 * Redis stores' Lua scripts and the jdbc store's schema scripts.
 */
class IdempotencyRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources()
			.registerPattern("io/github/idempotency/store/redis/*.lua")
			.registerPattern("io/github/idempotency/store/hybrid/*.lua")
			.registerPattern("io/github/idempotency/store/jdbc/schema-*.sql");
	}

}
