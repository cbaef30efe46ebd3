package io.github.idempotency.autoconfigure;

import io.github.idempotency.actuate.IdempotencyHealthIndicator;
import io.github.idempotency.store.IdempotencyStore;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code idempotency} health contributor: whether the store answers, naming its
 * backend and where it is (Redis's {@code host:port}, the jdbc URL without credentials).
 * Disabled by
 * {@code management.health.idempotency.enabled=false}.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class,
		beforeName = "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration")
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnEnabledHealthIndicator("idempotency")
public final class IdempotencyHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyHealthIndicator")
	IdempotencyHealthIndicator idempotencyHealthIndicator(IdempotencyStore store, ListableBeanFactory beans) {
		return new IdempotencyHealthIndicator(store, StoreLocation.of(store.backend(), beans));
	}

}
