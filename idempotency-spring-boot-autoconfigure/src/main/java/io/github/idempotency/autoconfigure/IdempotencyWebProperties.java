package io.github.idempotency.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of {@code @Idempotent} on HTTP handler methods, Spring MVC and WebFlux
 * alike.
 */
@ConfigurationProperties("idempotency.web")
public class IdempotencyWebProperties {

	/**
	 * Whether @Idempotent handler methods take their key from a request header, store
	 * their responses and answer idempotency errors with problem details.
	 */
	private boolean enabled = true;

	/**
	 * Request header that carries the idempotency key of a handler method without an
	 * explicit key.
	 */
	private String keyHeader = "Idempotency-Key";

	/**
	 * Response header (with the value "true") that marks a replayed response.
	 */
	private String replayedHeader = "Idempotent-Replayed";

	/**
	 * Response headers stored and replayed with a response. Set-Cookie and authentication
	 * headers are never stored.
	 */
	private List<String> storedHeaders = new ArrayList<>(
			List.of("Location", "Content-Type", "Content-Location", "ETag", "Last-Modified"));

	/**
	 * SpEL expression for the caller's identity, evaluated on the request (as the root
	 * object and as #request): on Spring MVC the HttpServletRequest, for example
	 * "#request.getHeader('X-Client-Id')"; on WebFlux the ServerHttpRequest (and the
	 * exchange as #exchange), for example "#request.headers.getFirst('X-Client-Id')". When
	 * set, keys are scoped by it instead of by the authenticated principal.
	 */
	private @Nullable String principal;

	/**
	 * Whether, without a principal expression, the keys of a request with an
	 * authenticated principal (HttpServletRequest.getUserPrincipal() on Spring MVC,
	 * ServerWebExchange.getPrincipal() on WebFlux, both set by Spring Security) are scoped
	 * by its name, so that two callers never read each other's responses. Requests
	 * without one share one scope.
	 */
	private boolean principalScope = true;

	/**
	 * Retry-After of the 409 answer to a request whose key is still in progress, and of
	 * the 503 answer when the store fails.
	 */
	private Duration retryAfter = Duration.ofSeconds(1);

	private final Reactive reactive = new Reactive();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public String getReplayedHeader() {
		return this.replayedHeader;
	}

	public void setReplayedHeader(String replayedHeader) {
		this.replayedHeader = replayedHeader;
	}

	public List<String> getStoredHeaders() {
		return this.storedHeaders;
	}

	public void setStoredHeaders(List<String> storedHeaders) {
		this.storedHeaders = storedHeaders;
	}

	public @Nullable String getPrincipal() {
		return this.principal;
	}

	public void setPrincipal(@Nullable String principal) {
		this.principal = principal;
	}

	public boolean isPrincipalScope() {
		return this.principalScope;
	}

	public void setPrincipalScope(boolean principalScope) {
		this.principalScope = principalScope;
	}

	public Reactive getReactive() {
		return this.reactive;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	/**
	 * WebFlux handler methods.
	 */
	public static class Reactive {

		/**
		 * Threads of the bounded scheduler ("idempotency-web") on which a WebFlux handler
		 * method's store calls run (the claim, the wait for a duplicate in progress, the
		 * settlement), never on an event loop. When unset, ten per CPU core, as Reactor's
		 * boundedElastic. A duplicate that waits holds a thread while it waits.
		 */
		private @Nullable Integer schedulerThreads;

		public @Nullable Integer getSchedulerThreads() {
			return this.schedulerThreads;
		}

		public void setSchedulerThreads(@Nullable Integer schedulerThreads) {
			this.schedulerThreads = schedulerThreads;
		}

		/**
		 * The threads of the scheduler: the property, else ten per CPU core.
		 * @return the number of threads
		 */
		public int schedulerThreads() {
			return (this.schedulerThreads != null) ? this.schedulerThreads
					: 10 * Runtime.getRuntime().availableProcessors();
		}

	}

}
