package io.github.idempotency.benchmarks;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A WebFlux handler method with a key (a first request, a replay) on the engine's
 * non-blocking path against the bounded-scheduler path, at 1, 16 and 256 concurrent
 * clients, in one run: the same application, the same handler, the same memory store, once
 * with its non-blocking side (the default) and once as a blocking store (an
 * {@code IdempotencyStore} bean of the application's, which the engine calls on the
 * {@code idempotency-web} scheduler). An operation is one request of {@code clients} sent at
 * once over kept-alive HTTP/1.1 connections; the score is rounds of {@code clients} requests per unit of time, so
 * {@code path=nonBlocking} over {@code path=scheduler} at the same {@code clients} is what
 * compares.
 */
@State(Scope.Benchmark)
public class WebFluxPathBenchmark {

	/** How many requests are in flight at once. */
	@Param({ "1", "16", "256" })
	public int clients;

	/** {@code nonBlocking}: the store's non-blocking side; {@code scheduler}: a blocking store on the scheduler. */
	@Param({ "nonBlocking", "scheduler" })
	public String path;

	private final String prefix = UUID.randomUUID().toString().substring(0, 8) + "-";

	private final AtomicLong next = new AtomicLong();

	private HttpClient client;

	private java.util.concurrent.ExecutorService clientThreads;

	private ConfigurableApplicationContext context;

	private String address;

	private String[] replayed;

	@Setup(Level.Trial)
	public void start() {
		Map<String, Object> properties = new HashMap<>(Map.of("server.port", "0", "logging.level.root", "WARN",
				"idempotency.backend", "memory", "spring.autoconfigure.exclude",
				String.join(",", "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
						"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")));
		SpringApplicationBuilder application = new SpringApplicationBuilder(HttpBenchmark.WebFluxApplication.class)
			.web(WebApplicationType.REACTIVE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties(properties);
		if ("scheduler".equals(this.path)) {
			application.sources(BlockingMemoryStore.class);
		}
		this.context = application.run();
		this.address = "http://localhost:" + ((WebServerApplicationContext) this.context).getWebServer().getPort();
		this.clientThreads = Executors.newFixedThreadPool(2);
		this.client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.executor(this.clientThreads)
			.connectTimeout(Duration.ofSeconds(10))
			.build();
		this.replayed = new String[this.clients];
		for (int i = 0; i < this.clients; i++) {
			this.replayed[i] = this.prefix + "replayed-" + i;
		}
		send(this.replayed);
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.context.close();
		this.clientThreads.shutdownNow();
	}

	@Benchmark
	public int first() {
		String[] keys = new String[this.clients];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = this.prefix + this.next.incrementAndGet();
		}
		return send(keys);
	}

	@Benchmark
	public int replay() {
		return send(this.replayed);
	}

	/** Sends one request per key at once and waits for every answer, each a 200. */
	private int send(String[] keys) {
		@SuppressWarnings("unchecked")
		CompletableFuture<HttpResponse<Void>>[] answers = new CompletableFuture[keys.length];
		for (int i = 0; i < keys.length; i++) {
			HttpRequest request = HttpRequest.newBuilder(URI.create(this.address + "/payments/" + keys[i]))
				.header("Content-Type", "application/json")
				.header("Idempotency-Key", keys[i])
				.POST(HttpRequest.BodyPublishers.ofString("{\"amountCents\":1250}"))
				.build();
			answers[i] = this.client.sendAsync(request, HttpResponse.BodyHandlers.discarding());
		}
		int ok = 0;
		for (CompletableFuture<HttpResponse<Void>> answer : answers) {
			int status = answer.join().statusCode();
			if (status != 200) {
				throw new IllegalStateException("Expected 200, got " + status);
			}
			ok++;
		}
		return ok;
	}

	/** The memory store as a blocking store of the application's: the scheduler path. */
	@Configuration(proxyBeanMethods = false)
	static class BlockingMemoryStore {

		@Bean
		IdempotencyStore idempotencyStore() {
			return new MemoryIdempotencyStore();
		}

	}

}
