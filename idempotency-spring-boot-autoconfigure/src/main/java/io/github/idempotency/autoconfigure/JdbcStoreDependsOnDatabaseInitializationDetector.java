package io.github.idempotency.autoconfigure;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitializationDetector;
import org.springframework.util.ClassUtils;

/**
 * Makes the stores on the jdbc table (and its cleaner) wait for database initialization:
 * their own schema, Flyway, Liquibase. Types are named, so that this detector loads
 * whether or not Redis is on the class path.
 */
class JdbcStoreDependsOnDatabaseInitializationDetector implements DependsOnDatabaseInitializationDetector {

	private static final List<String> TYPES = List.of("io.github.idempotency.store.jdbc.JdbcIdempotencyStore",
			"io.github.idempotency.store.ExpiredRecordsCleaner",
			"io.github.idempotency.store.hybrid.HybridIdempotencyStore");

	@Override
	public Set<String> detect(ConfigurableListableBeanFactory beanFactory) {
		Set<String> beanNames = new HashSet<>();
		ClassLoader classLoader = beanFactory.getBeanClassLoader();
		for (String type : TYPES) {
			if (ClassUtils.isPresent(type, classLoader)) {
				Class<?> beanType = ClassUtils.resolveClassName(type, classLoader);
				beanNames.addAll(Arrays.asList(beanFactory.getBeanNamesForType(beanType, true, false)));
			}
		}
		return beanNames;
	}

}
