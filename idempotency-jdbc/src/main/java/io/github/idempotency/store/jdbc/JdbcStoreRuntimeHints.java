package io.github.idempotency.store.jdbc;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What the jdbc store's module loads by name, for ahead-of-time processing and native
 * images: its schema scripts.
 */
class JdbcStoreRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern("io/github/idempotency/store/jdbc/schema-*.sql");
	}

}
