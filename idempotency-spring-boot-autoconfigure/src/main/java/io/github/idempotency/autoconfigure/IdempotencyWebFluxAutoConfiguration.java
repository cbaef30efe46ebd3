package io.github.idempotency.autoconfigure;

import reactor.core.scheduler.Schedulers;

import io.github.idempotency.IdempotencyRuntime;
import io.github.idempotency.web.reactive.HandlerExchangeAdvice;
import io.github.idempotency.web.reactive.IdempotencyExchangeFilter;
import io.github.idempotency.web.reactive.ReactiveHandlerMethodIdempotency;
import io.github.idempotency.web.reactive.ReactiveIdempotencyProblemHandler;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.DispatcherHandler;

/**
 * {@code @Idempotent} on annotated WebFlux handler methods ({@code Mono<T>},
 * {@code Mono<ResponseEntity<T>>}, and plain results with blocking execution and Reactor's
 * automatic context propagation), in a reactive web application: the key from the
 * {@code Idempotency-Key} header, what the client received stored and replayed byte for
 * byte ({@link ReactiveHandlerMethodIdempotency}, whose store calls for a {@code Mono} run
 * on a bounded scheduler of {@code idempotency.web.reactive.scheduler-threads} threads),
 * bodies fingerprinted and answers kept as written ({@link IdempotencyExchangeFilter}), the
 * principal read from the exchange the method is called with
 * ({@link HandlerExchangeAdvice}), idempotency errors answered with problem details
 * ({@link ReactiveIdempotencyProblemHandler}).
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, Schedulers.class })
@ConditionalOnBean(IdempotencyRuntime.class)
@ConditionalOnBooleanProperty(name = "idempotency.web.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyWebProperties.class)
public final class IdempotencyWebFluxAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ReactiveHandlerMethodIdempotency reactiveHandlerMethodIdempotency(IdempotencyWebProperties properties,
			BeanFactory beanFactory) {
		int threads = properties.getReactive().schedulerThreads();
		if (threads < 1) {
			throw new IllegalArgumentException(
					"idempotency.web.reactive.scheduler-threads must be at least 1, not " + threads);
		}
		return new ReactiveHandlerMethodIdempotency(properties.getKeyHeader(), properties.getReplayedHeader(),
				properties.getStoredHeaders(), properties.getPrincipal(), properties.isPrincipalScope(),
				Schedulers.newBoundedElastic(threads, Schedulers.DEFAULT_BOUNDED_ELASTIC_QUEUESIZE, "idempotency-web",
						60, true),
				beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyExchangeFilter idempotencyExchangeFilter(IdempotencyWebProperties properties) {
		return new IdempotencyExchangeFilter(properties.getStoredHeaders());
	}

	@Bean
	@ConditionalOnMissingBean
	HandlerExchangeAdvice idempotencyHandlerExchangeAdvice() {
		return new HandlerExchangeAdvice();
	}

	@Bean
	@ConditionalOnMissingBean
	ReactiveIdempotencyProblemHandler reactiveIdempotencyProblemHandler(IdempotencyWebProperties properties) {
		return new ReactiveIdempotencyProblemHandler(properties.getKeyHeader(), properties.getReplayedHeader(),
				properties.getRetryAfter());
	}

}
