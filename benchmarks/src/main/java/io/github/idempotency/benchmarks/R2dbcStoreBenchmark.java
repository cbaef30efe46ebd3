package io.github.idempotency.benchmarks;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * The r2dbc store against the jdbc store on the same PostgreSQL table, in one run: a first
 * delivery (a claim and its completion) and a duplicate (a claim of a finished key), each
 * store on a pool of its own driver (HikariCP for JDBC, r2dbc-pool for R2DBC), the reactive
 * steps waited for on the benchmark's thread. What the r2dbc store saves is the thread a
 * JDBC call holds while it waits, which shows with many calls in flight ({@code -t}), not
 * in the latency of one.
 */
@State(Scope.Benchmark)
public class R2dbcStoreBenchmark {

	private static final String TABLE = "bench_store_record";

	private static final String WORKFLOW = "bench-store";

	private HikariDataSource dataSource;

	private ConnectionFactory connectionFactory;

	private JdbcIdempotencyStore jdbc;

	private R2dbcIdempotencyStore r2dbc;

	@Setup(Level.Trial)
	public void start() {
		// jdbc:postgresql://host:port/db?user=u as r2dbc:pool:postgresql://u@host:port/db
		String url = Objects.requireNonNullElse(System.getenv("IDEMPOTENCY_TEST_POSTGRES_URL"),
				"jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
		java.net.URI jdbcUri = java.net.URI.create(url.substring("jdbc:".length()));
		String user = "postgres";
		for (String parameter : String.valueOf(jdbcUri.getQuery()).split("&")) {
			if (parameter.startsWith("user=")) {
				user = parameter.substring("user=".length());
			}
		}
		this.dataSource = new HikariDataSource();
		this.dataSource.setJdbcUrl(url);
		this.dataSource.setMaximumPoolSize(16);
		this.connectionFactory = ConnectionFactories.get("r2dbc:pool:postgresql://" + user + "@" + jdbcUri.getHost()
				+ ":" + jdbcUri.getPort() + jdbcUri.getPath() + "?maxSize=16");
		new org.springframework.jdbc.core.JdbcTemplate(this.dataSource).execute("DROP TABLE IF EXISTS " + TABLE);
		String script = new String(schemaScript(), java.nio.charset.StandardCharsets.UTF_8).replace("idempotency_record",
				TABLE);
		new ResourceDatabasePopulator(new org.springframework.core.io.ByteArrayResource(
				script.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
			.execute(this.dataSource);
		this.jdbc = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(5), Clock.systemUTC());
		this.r2dbc = new R2dbcIdempotencyStore(this.connectionFactory, TABLE, Duration.ofSeconds(5), Clock.systemUTC());
		for (String key : DuplicateKeys.all()) {
			ClaimResult claim = this.jdbc.claim(request(key));
			claim.acquiredHandle().complete("{\"id\":\"" + key + "\"}");
		}
	}

	private static byte[] schemaScript() {
		try (java.io.InputStream in = new ClassPathResource("io/github/idempotency/store/jdbc/schema-postgresql.sql")
			.getInputStream()) {
			return in.readAllBytes();
		}
		catch (java.io.IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.dataSource.close();
		if (this.connectionFactory instanceof io.r2dbc.pool.ConnectionPool pool) {
			pool.dispose();
		}
	}

	@Benchmark
	public boolean jdbcFirst(Keys keys) {
		return this.jdbc.claim(request(keys.next())).acquiredHandle().complete("{\"id\":\"r\"}");
	}

	@Benchmark
	public ClaimOutcome jdbcDuplicate(DuplicateKeys keys) {
		return this.jdbc.claim(request(keys.next())).outcome();
	}

	@Benchmark
	public Boolean r2dbcFirst(Keys keys) {
		return this.r2dbc.claim(request(keys.next()))
			.flatMap((claim) -> claim.acquiredHandle().complete("{\"id\":\"r\"}"))
			.block();
	}

	@Benchmark
	public ClaimOutcome r2dbcDuplicate(DuplicateKeys keys) {
		return Objects.requireNonNull(this.r2dbc.claim(request(keys.next())).map(ReactiveClaimResult::outcome).block());
	}

	private static ClaimRequest request(String key) {
		return new ClaimRequest(new RecordId(WORKFLOW, key), UUID.randomUUID().toString(), null, Duration.ofSeconds(30),
				Duration.ofMinutes(10));
	}

}
