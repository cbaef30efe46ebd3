package io.github.idempotency.autoconfigure;

import io.github.idempotency.IdempotencyRuntime;
import io.github.idempotency.web.HandlerMethodIdempotency;
import io.github.idempotency.web.IdempotentRequestBodyAdvice;
import io.github.idempotency.web.IdempotencyProblemHandler;
import io.github.idempotency.web.IdempotencyResponseFilter;
import io.github.idempotency.web.CapturedFailureResolver;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * {@code @Idempotent} on Spring MVC handler methods, in a servlet web application: the
 * key from the {@code Idempotency-Key} header ({@link HandlerMethodIdempotency}), what the
 * client received kept and stored ({@link IdempotencyResponseFilter}) and replayed byte for
 * byte ({@link CapturedFailureResolver}), bodies fingerprinted as received
 * ({@link IdempotentRequestBodyAdvice}), idempotency errors answered with problem details
 * ({@link IdempotencyProblemHandler}).
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBean(IdempotencyRuntime.class)
@ConditionalOnBooleanProperty(name = "idempotency.web.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyWebProperties.class)
public final class IdempotencyWebMvcAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	HandlerMethodIdempotency handlerMethodIdempotency(IdempotencyWebProperties properties, BeanFactory beanFactory) {
		return new HandlerMethodIdempotency(properties.getKeyHeader(), properties.getReplayedHeader(),
				properties.getStoredHeaders(), properties.getPrincipal(), properties.isPrincipalScope(), beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentRequestBodyAdvice idempotentRequestBodyAdvice() {
		return new IdempotentRequestBodyAdvice();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyResponseFilter idempotencyResponseFilter(IdempotencyWebProperties properties) {
		return new IdempotencyResponseFilter(properties.getStoredHeaders(), properties.getRetryAfter());
	}

	@Bean
	@ConditionalOnMissingBean
	CapturedFailureResolver idempotencyCapturedFailureResolver() {
		return new CapturedFailureResolver();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyProblemHandler idempotencyProblemHandler(IdempotencyWebProperties properties) {
		return new IdempotencyProblemHandler(properties.getKeyHeader(), properties.getReplayedHeader(),
				properties.getRetryAfter());
	}

}
