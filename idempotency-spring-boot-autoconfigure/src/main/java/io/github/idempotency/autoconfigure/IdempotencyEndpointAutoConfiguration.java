package io.github.idempotency.autoconfigure;

import io.github.idempotency.actuate.IdempotencyEndpoint;
import io.github.idempotency.actuate.IdempotencyEndpointWebExtension;
import io.github.idempotency.IdempotencyRuntime;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The {@link IdempotencyEndpoint} when Actuator is present and the endpoint is
 * available (enabled and exposed), and its {@link IdempotencyEndpointWebExtension} when
 * it is exposed over HTTP. {@code management.endpoint.idempotency.show-values} and
 * {@code .roles} decide when a record's stored values are shown.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
@EnableConfigurationProperties(IdempotencyEndpointProperties.class)
public final class IdempotencyEndpointAutoConfiguration {

	@Bean
	@ConditionalOnBean(IdempotencyRuntime.class)
	@ConditionalOnMissingBean
	IdempotencyEndpoint idempotencyEndpoint(IdempotencyRuntime engine, IdempotencyEndpointProperties properties) {
		return new IdempotencyEndpoint(engine, properties.getShowValues());
	}

	@Bean
	@ConditionalOnBean(IdempotencyEndpoint.class)
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	IdempotencyEndpointWebExtension idempotencyEndpointWebExtension(IdempotencyEndpoint endpoint,
			IdempotencyEndpointProperties properties) {
		return new IdempotencyEndpointWebExtension(endpoint, properties.getShowValues(), properties.getRoles());
	}

}
