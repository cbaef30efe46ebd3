package io.github.idempotency.store.redis;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What the Redis stores' module loads by name, for ahead-of-time processing and native
 * images: the Lua scripts of the redis and hybrid stores.
 */
class RedisStoreRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources()
			.registerPattern("io/github/idempotency/store/redis/*.lua")
			.registerPattern("io/github/idempotency/store/hybrid/*.lua");
	}

}
