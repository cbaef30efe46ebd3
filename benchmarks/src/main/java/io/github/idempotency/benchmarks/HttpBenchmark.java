package io.github.idempotency.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.publisher.Mono;

import io.github.idempotency.Idempotent;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The HTTP adapters on a real server and a real client, on the memory store (no network
 * but the loopback HTTP connection): a first request (claim, the handler, its answer kept,
 * complete) and a replay (claim, the stored answer written), against the same handler
 * without {@code @Idempotent} ({@code *Plain}), on Spring MVC (Tomcat) and WebFlux
 * (Reactor Netty, a {@code Mono} handler). The client is the JDK's {@code HttpClient} over
 * HTTP/1.1 with kept-alive connections; its own cost is in every figure, so the ratios to
 * {@code *Plain} in one run are what compares.
 */
public class HttpBenchmark {

	@Benchmark
	public int mvcFirst(Servers servers, Keys keys) {
		return servers.post(servers.mvc, "/payments/", keys.next());
	}

	@Benchmark
	public int mvcReplay(Servers servers, DuplicateKeys keys) {
		return servers.post(servers.mvc, "/payments/", keys.next());
	}

	@Benchmark
	public int mvcPlain(Servers servers, Keys keys) {
		return servers.post(servers.mvc, "/plain-payments/", keys.next());
	}

	@Benchmark
	public int webfluxFirst(Servers servers, Keys keys) {
		return servers.post(servers.webflux, "/payments/", keys.next());
	}

	@Benchmark
	public int webfluxReplay(Servers servers, DuplicateKeys keys) {
		return servers.post(servers.webflux, "/payments/", keys.next());
	}

	@Benchmark
	public int webfluxPlain(Servers servers, Keys keys) {
		return servers.post(servers.webflux, "/plain-payments/", keys.next());
	}

	/**
	 * One Spring MVC and one WebFlux application, each with the starter on the memory
	 * store; the keys of {@link DuplicateKeys} answered once by each before the
	 * measurement.
	 */
	@State(Scope.Benchmark)
	public static class Servers {

		private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

		ConfigurableApplicationContext mvcContext;

		ConfigurableApplicationContext webfluxContext;

		String mvc;

		String webflux;

		@Setup(Level.Trial)
		public void start() {
			this.mvcContext = run(WebApplicationType.SERVLET, MvcApplication.class);
			this.webfluxContext = run(WebApplicationType.REACTIVE, WebFluxApplication.class);
			this.mvc = address(this.mvcContext);
			this.webflux = address(this.webfluxContext);
			for (String key : DuplicateKeys.all()) {
				expect(post(this.mvc, "/payments/", key));
				expect(post(this.webflux, "/payments/", key));
			}
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.mvcContext.close();
			this.webfluxContext.close();
		}

		/**
		 * Posts a payment with the key as its {@code Idempotency-Key}, and its path too, so
		 * that the plain handler's answer is the same.
		 * @return the status
		 */
		int post(String server, String path, String key) {
			HttpRequest request = HttpRequest.newBuilder(URI.create(server + path + key))
				.header("Content-Type", "application/json")
				.header("Idempotency-Key", key)
				.POST(HttpRequest.BodyPublishers.ofString("{\"amountCents\":1250}"))
				.build();
			try {
				return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

		private static void expect(int status) {
			if (status != 200) {
				throw new IllegalStateException("Expected 200, got " + status);
			}
		}

		private static ConfigurableApplicationContext run(WebApplicationType type, Class<?> source) {
			return new SpringApplicationBuilder(source).web(type)
				.bannerMode(Banner.Mode.OFF)
				.logStartupInfo(false)
				.properties(Map.of("server.port", "0", "logging.level.root", "WARN", "idempotency.backend",
						"memory", "spring.autoconfigure.exclude", String.join(",",
								"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
								"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")))
				.run();
		}

		private static String address(ConfigurableApplicationContext context) {
			return "http://localhost:" + ((WebServerApplicationContext) context).getWebServer().getPort();
		}

	}

	/** The answer of a payment. */
	public record Charged(String key, long amountCents, String status) {
	}

	/** What a client sends. */
	public record Order(long amountCents) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(MvcPayments.class)
	static class MvcApplication {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(WebFluxPayments.class)
	static class WebFluxApplication {

	}

	@RestController
	static class MvcPayments {

		@PostMapping("/payments/{key}")
		@Idempotent(workflow = "bench-http", retention = "2m")
		public Charged pay(@PathVariable String key, @RequestBody Order order) {
			return new Charged(key, order.amountCents(), "CHARGED");
		}

		@PostMapping("/plain-payments/{key}")
		public Charged payPlain(@PathVariable String key, @RequestBody Order order) {
			return new Charged(key, order.amountCents(), "CHARGED");
		}

	}

	@RestController
	static class WebFluxPayments {

		@PostMapping("/payments/{key}")
		@Idempotent(workflow = "bench-http", retention = "2m")
		public Mono<Charged> pay(@PathVariable String key, @RequestBody Mono<Order> order) {
			return order.map((sent) -> new Charged(key, sent.amountCents(), "CHARGED"));
		}

		@PostMapping("/plain-payments/{key}")
		public Mono<Charged> payPlain(@PathVariable String key, @RequestBody Mono<Order> order) {
			return order.map((sent) -> new Charged(key, sent.amountCents(), "CHARGED"));
		}

	}

}
