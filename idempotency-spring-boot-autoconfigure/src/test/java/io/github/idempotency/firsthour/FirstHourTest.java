package io.github.idempotency.firsthour;

import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.actuate.IdempotencyEndpoint;
import io.github.idempotency.firsthour.FirstHourApplication.PaymentRequest;
import io.github.idempotency.firsthour.FirstHourApplication.Receipt;
import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.actuate.endpoint.MetricsEndpoint;
import org.springframework.boot.micrometer.metrics.actuate.endpoint.MetricsEndpoint.MetricDescriptor;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A new user's first hour: {@link FirstHourApplication}, written from README's snippets
 * only, with everything the test class path holds (JPA, Spring AMQP, Kafka, Redis,
 * Actuator), on PostgreSQL (the {@code jdbc} store, its table created by
 * {@code initialize-schema=always} in an empty schema) and on Redis. It starts, answers a
 * duplicate as a hit, and Actuator shows the counters, the store's health and the
 * endpoint (read through the endpoint beans; the same over HTTP, where the health details
 * need README's {@code show-details}, is {@code SampleApplicationTest}'s).
 */
class FirstHourTest {

	private final String schema = "first_hour_" + UUID.randomUUID().toString().replace("-", "");

	private final String key = "first-hour-" + UUID.randomUUID();

	@AfterEach
	void dropSchema() {
		server().sql("DROP SCHEMA IF EXISTS " + this.schema + " CASCADE").update();
	}

	@Test
	void onPostgres() {
		try (ConfigurableApplicationContext app = start()) {
			answersADuplicateAsAHitAndShowsIt(app, "jdbc");
			assertThat(server().sql("SELECT count(*) FROM " + this.schema + ".idempotency_record WHERE idempotency_key = ?")
				.param(this.key)
				.query(Long.class)
				.single()).as("the record, in the table the start created").isOne();
		}
	}

	@Test
	void onRedis() {
		try (ConfigurableApplicationContext app = start("--spring.profiles.active=redis",
				"--spring.data.redis.url=" + TestServers.redisUrl())) {
			answersADuplicateAsAHitAndShowsIt(app, "redis");
		}
	}

	private void answersADuplicateAsAHitAndShowsIt(ConfigurableApplicationContext app, String backend) {
		PaymentService payments = app.getBean(PaymentService.class);
		Receipt first = payments.charge(new PaymentRequest(this.key, 100));
		Receipt second = payments.charge(new PaymentRequest(this.key, 100));
		assertThat(second).isEqualTo(first);
		assertThat(payments.charges()).isOne();

		// GET /actuator/metrics/idempotency.requests?tag=outcome:hit
		MetricDescriptor hits = app.getBean(MetricsEndpoint.class)
			.metric("idempotency.requests", List.of("outcome:hit"));
		assertThat(hits).isNotNull();
		assertThat(hits.getMeasurements()).singleElement().satisfies((measurement) -> {
			assertThat(measurement.getStatistic().name()).isEqualTo("COUNT");
			assertThat(measurement.getValue()).isEqualTo(1.0);
		});
		MetricDescriptor misses = app.getBean(MetricsEndpoint.class)
			.metric("idempotency.requests", List.of("outcome:miss", "workflow:payment", "backend:" + backend));
		assertThat(misses).isNotNull();
		assertThat(misses.getMeasurements()).singleElement()
			.satisfies((measurement) -> assertThat(measurement.getValue()).isEqualTo(1.0));

		// GET /actuator/health: "idempotency":{"status":"UP","details":{"backend":...}}
		assertThat(app.getBean(HealthEndpoint.class).healthForPath("idempotency"))
			.isInstanceOfSatisfying(IndicatedHealthDescriptor.class, (health) -> {
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsEntry("backend", backend);
			});

		// GET /actuator/idempotency
		assertThat(app.getBean(IdempotencyEndpoint.class).idempotency().backend()).isEqualTo(backend);
	}

	private ConfigurableApplicationContext start(String... more) {
		server().sql("CREATE SCHEMA " + this.schema).update();
		String url = TestServers.postgresUrl();
		List<String> args = new java.util.ArrayList<>(List.of("--spring.config.name=first-hour",
				"--spring.datasource.url=" + url + (url.contains("?") ? "&" : "?") + "currentSchema=" + this.schema));
		args.addAll(List.of(more));
		return new SpringApplicationBuilder(FirstHourApplication.class).web(WebApplicationType.NONE)
			.run(args.toArray(String[]::new));
	}

	private static JdbcClient server() {
		return JdbcClient.create(new DriverManagerDataSource(TestServers.postgresUrl()));
	}

}
