package io.github.idempotency.autoconfigure;

import io.github.idempotency.actuate.IdempotencyEndpoint;
import io.github.idempotency.core.IdempotencyEngine;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@link IdempotencyEndpoint} when Actuator is present and the endpoint is
 * available (enabled and exposed).
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
public final class IdempotencyEndpointAutoConfiguration {

	@Bean
	@ConditionalOnBean(IdempotencyEngine.class)
	@ConditionalOnMissingBean
	IdempotencyEndpoint idempotencyEndpoint(IdempotencyEngine engine) {
		return new IdempotencyEndpoint(engine);
	}

}
