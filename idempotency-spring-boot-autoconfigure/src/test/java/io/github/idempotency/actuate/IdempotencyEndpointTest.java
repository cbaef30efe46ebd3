package io.github.idempotency.actuate;

import java.time.Duration;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.actuate.IdempotencyEndpoint.IdempotencyDescriptor;
import io.github.idempotency.actuate.IdempotencyEndpoint.RecordDescriptor;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyEndpointAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyHealthContributorAutoConfiguration;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code idempotency} endpoint and health contributor.
 */
class IdempotencyEndpointTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyEndpointAutoConfiguration.class, IdempotencyHealthContributorAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory", "idempotency.lease-ttl=20s",
				"idempotency.on-in-progress=reject");

	private final ApplicationContextRunner exposed = this.runner
		.withPropertyValues("management.endpoints.web.exposure.include=idempotency");

	@Test
	void theEndpointIsOnlyCreatedWhenExposed() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class));
		this.exposed.run((context) -> assertThat(context).hasSingleBean(IdempotencyEndpoint.class));
	}

	@Test
	void readsTheBackendAndSettings() {
		this.exposed.run((context) -> {
			IdempotencyDescriptor descriptor = context.getBean(IdempotencyEndpoint.class).idempotency();
			assertThat(descriptor.backend()).isEqualTo("memory");
			assertThat(descriptor.settings().leaseTtl()).isEqualTo(Duration.ofSeconds(20));
			assertThat(descriptor.settings().onInProgress()).isEqualTo(InProgressPolicy.REJECT);
			assertThat(descriptor.settings().maxKeyLength()).isEqualTo(255);
		});
	}

	@Test
	void readsOneRecordOrNothing() {
		this.exposed.run((context) -> {
			context.getBean(IdempotencyTemplate.class)
				.execute(IdempotentRequest.of("payment", "p-1"), String.class, () -> "receipt-1");
			IdempotencyEndpoint endpoint = context.getBean(IdempotencyEndpoint.class);
			RecordDescriptor record = endpoint.record("payment", "p-1");
			assertThat(record).isNotNull();
			assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(record.attempt()).isOne();
			assertThat(record.response()).isEqualTo(IdempotencyEndpoint.MASK);
			assertThat(record.responseSize()).isEqualTo(11);
			assertThat(record.expiresAt()).isAfter(record.createdAt());
			assertThat(endpoint.record("payment", "p-2")).isNull();
			assertThat(endpoint.record("refund", "p-1")).isNull();
		});
	}

	@Test
	void deletesAStuckRecordSoTheKeyRunsAgain() {
		this.exposed.run((context) -> {
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			RecordId id = new RecordId("payment", "stuck");
			store.claim(new ClaimRequest(id, "crashed", null, Duration.ofHours(1), Duration.ofDays(1)));
			IdempotencyEndpoint endpoint = context.getBean(IdempotencyEndpoint.class);
			assertThat(endpoint.record("payment", "stuck").status()).isEqualTo(RecordStatus.IN_PROGRESS);
			assertThat(endpoint.delete("payment", "stuck").deleted()).isTrue();
			assertThat(endpoint.delete("payment", "stuck").deleted()).isFalse();
			String result = context.getBean(IdempotencyTemplate.class)
				.execute(IdempotentRequest.of("payment", "stuck"), String.class, () -> "ran again");
			assertThat(result).isEqualTo("ran again");
		});
	}

	@Test
	void healthIsUpWhenTheStoreAnswers() {
		this.runner.run((context) -> {
			Health health = context.getBean(IdempotencyHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("backend", "memory");
		});
	}

	@Test
	void healthIsDownWhenTheStoreDoesNotAnswer() {
		this.runner.withBean(IdempotencyStore.class, () -> new UnreachableIdempotencyStore("redis")).run((context) -> {
			Health health = context.getBean(IdempotencyHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		});
	}

	@Test
	void healthNamesARedisStoreAndItsAddressWhenItIsDown() {
		// nothing listens on port 1: the store is down, and named
		LettuceConnectionFactory unreachable = RedisConnections.standalone("redis://127.0.0.1:1");
		try {
			this.runner.withBean(RedisConnectionFactory.class, () -> unreachable)
				.withPropertyValues("idempotency.backend=redis")
				.run((context) -> {
					Health health = context.getBean(IdempotencyHealthIndicator.class).health();
					assertThat(health.getStatus()).isEqualTo(Status.DOWN);
					assertThat(health.getDetails()).containsEntry("backend", "redis")
						.containsEntry("address", "127.0.0.1:1");
				});
		}
		finally {
			unreachable.destroy();
		}
	}

	@Test
	void healthNamesAJdbcStoreAndItsUrlWithoutCredentials() {
		this.runner
			.withBean(DataSource.class,
					() -> new DriverManagerDataSource(
					"jdbc:h2:mem:health-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;user=sa;password=secret")).withPropertyValues("idempotency.backend=jdbc", "idempotency.jdbc.initialize-schema=always").run((context) -> {
			Health health = context.getBean(IdempotencyHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("backend", "jdbc");
			assertThat((String) health.getDetails().get("address")).startsWith("jdbc:h2:mem:health-")
				.endsWith(";DB_CLOSE_DELAY=-1")
				.doesNotContain("secret")
				.doesNotContain("user");
		});
	}

	@Test
	void healthCanBeDisabled() {
		this.runner.withPropertyValues("management.health.idempotency.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyHealthIndicator.class));
	}

}
