package io.github.idempotency.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The modules the stores ship in, next to the starter: {@code idempotency-jdbc} for
 * {@code jdbc}, {@code idempotency-r2dbc} for {@code r2dbc}, {@code idempotency-redis} for
 * {@code redis}, jdbc and redis for {@code hybrid}. A
 * backend whose module is missing fails the start with a message that names it.
 */
final class StoreModules {

	static final String JDBC_STORE = "io.github.idempotency.store.jdbc.JdbcIdempotencyStore";

	static final String R2DBC_STORE = "io.github.idempotency.store.r2dbc.R2dbcIdempotencyStore";

	static final String REDIS_STORE = "io.github.idempotency.store.redis.RedisIdempotencyStore";

	private StoreModules() {
	}

	/**
	 * The artifacts {@code backend} needs that are not on the class path.
	 * @param backend the backend
	 * @param classLoader the application's class loader
	 * @return the missing artifact ids, empty when nothing is missing
	 */
	static List<String> missing(IdempotencyBackend backend, @Nullable ClassLoader classLoader) {
		List<String> missing = new ArrayList<>();
		boolean jdbc = backend == IdempotencyBackend.JDBC || backend == IdempotencyBackend.HYBRID;
		boolean redis = backend == IdempotencyBackend.REDIS || backend == IdempotencyBackend.HYBRID;
		if (jdbc && !ClassUtils.isPresent(JDBC_STORE, classLoader)) {
			missing.add("idempotency-jdbc");
		}
		if (backend == IdempotencyBackend.R2DBC && !ClassUtils.isPresent(R2DBC_STORE, classLoader)) {
			missing.add("idempotency-r2dbc");
		}
		if (redis && !ClassUtils.isPresent(REDIS_STORE, classLoader)) {
			missing.add("idempotency-redis");
		}
		return missing;
	}

	/**
	 * Why a connection the application has is not used for want of its store module.
	 * @param beanFactory the application's bean factory
	 * @param classLoader the application's class loader
	 * @return the reason, or {@code null} when no connection is left unused
	 */
	static @Nullable String unusedConnection(ListableBeanFactory beanFactory, @Nullable ClassLoader classLoader) {
		if (!ClassUtils.isPresent(JDBC_STORE, classLoader) && hasBean(beanFactory, "javax.sql.DataSource", classLoader)) {
			return "A DataSource exists but io.github.idempotency:idempotency-jdbc is not on the class path";
		}
		if (!ClassUtils.isPresent(REDIS_STORE, classLoader) && hasBean(beanFactory,
				"org.springframework.data.redis.connection.RedisConnectionFactory", classLoader)) {
			return "A RedisConnectionFactory exists but io.github.idempotency:idempotency-redis is not on the "
					+ "class path";
		}
		return null;
	}

	private static boolean hasBean(ListableBeanFactory beanFactory, String type, @Nullable ClassLoader classLoader) {
		return ClassUtils.isPresent(type, classLoader) && beanFactory
			.getBeanNamesForType(ClassUtils.resolveClassName(type, classLoader), true, false).length > 0;
	}

	/**
	 * The failure of a start whose backend's module is missing.
	 * @param backend the backend {@code idempotency.backend} names
	 * @param missing the missing artifact ids
	 * @return the exception to throw
	 */
	static IllegalStateException failure(IdempotencyBackend backend, List<String> missing) {
		List<String> coordinates = missing.stream().map((artifact) -> "io.github.idempotency:" + artifact).toList();
		return new IllegalStateException("idempotency.backend=" + backend.name().toLowerCase(Locale.ROOT)
				+ " needs the store module " + String.join(" and ", coordinates)
				+ ", which is not on the class path: add it next to idempotency-spring-boot-starter");
	}

}
