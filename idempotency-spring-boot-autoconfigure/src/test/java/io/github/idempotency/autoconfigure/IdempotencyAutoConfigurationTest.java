package io.github.idempotency.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.aop.IdempotentAdvisor;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.store.redis.RedisIdempotencyStore;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the auto-configuration per test.
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations
		.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	@Test
	void withNothingConfiguredTheMemoryStoreIsUsedWithAWarning(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(MemoryIdempotencyStore.class)
				.hasSingleBean(IdempotencyEngine.class)
				.hasSingleBean(IdempotencyTemplate.class)
				.hasBean("idempotentAdvisor")
				.hasBean("idempotentHandlerMethodAdvisor");
			assertThat(output).contains("using the in-memory idempotency store");
		});
	}

	@Test
	void namingTheMemoryBackendLogsNoWarning(CapturedOutput output) {
		this.runner.withPropertyValues("idempotency.backend=memory").run((context) -> {
			assertThat(context).hasSingleBean(MemoryIdempotencyStore.class);
			assertThat(output).doesNotContain("using the in-memory idempotency store");
		});
	}

	@Test
	void aUsersStoreBeanWins() {
		this.runner.withPropertyValues("idempotency.backend=memory")
			.withBean("myStore", IdempotencyStore.class, () -> new UnreachableIdempotencyStore("custom"))
			.run((context) -> {
				assertThat(context).doesNotHaveBean(MemoryIdempotencyStore.class);
				assertThat(context.getBean(IdempotencyEngine.class).store())
					.isInstanceOf(UnreachableIdempotencyStore.class);
			});
	}

	@Test
	void disabledCreatesNothing() {
		this.runner.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyEngine.class)
				.doesNotHaveBean(IdempotencyStore.class)
				.doesNotHaveBean(IdempotentAdvisor.class));
	}

	@Test
	void anUnknownBackendFailsTheStartNamingTheValue() {
		this.runner.withPropertyValues("idempotency.backend=mongo").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessage("idempotency.backend='mongo' names no backend: use one of [jdbc, r2dbc, redis, hybrid, memory],"
						+ " or leave it unset to detect the store");
		});
	}

	@Test
	void aBackendWithoutItsConnectionFailsTheStartSayingWhatIsMissing() {
		this.runner.withPropertyValues("idempotency.backend=redis").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("No IdempotencyStore for idempotency.backend=REDIS")
				.hasMessageContaining("RedisConnectionFactory");
		});
	}

	@Test
	void theJdbcBackendWithoutItsModuleFailsTheStartNamingTheArtifact() {
		this.runner.withPropertyValues("idempotency.backend=jdbc")
			.withClassLoader(new FilteredClassLoader(JdbcIdempotencyStore.class))
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessage("idempotency.backend=jdbc needs the store module io.github.idempotency:idempotency-jdbc,"
							+ " which is not on the class path: add it next to idempotency-spring-boot-starter");
			});
	}

	@Test
	void theRedisBackendWithoutItsModuleFailsTheStartNamingTheArtifact() {
		this.runner.withPropertyValues("idempotency.backend=redis")
			.withClassLoader(new FilteredClassLoader(RedisIdempotencyStore.class))
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("needs the store module io.github.idempotency:idempotency-redis,"));
	}

	@Test
	void theHybridBackendNamesEachMissingModule() {
		this.runner.withPropertyValues("idempotency.backend=hybrid")
			.withClassLoader(new FilteredClassLoader(JdbcIdempotencyStore.class, RedisIdempotencyStore.class))
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("io.github.idempotency:idempotency-jdbc and io.github.idempotency:idempotency-redis"));
	}

	@Test
	void withoutTheStoreModulesTheMemoryStoreIsDetected() {
		this.runner.withClassLoader(new FilteredClassLoader(JdbcIdempotencyStore.class, RedisIdempotencyStore.class))
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class));
	}

	@Test
	void aDataSourceWithoutTheJdbcModuleFailsTheStartInsteadOfKeepingRecordsInMemory() {
		this.runner.withClassLoader(new FilteredClassLoader(JdbcIdempotencyStore.class))
			.withBean(DataSource.class, () -> new DriverManagerDataSource("jdbc:h2:mem:unused"))
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessage("A DataSource exists but io.github.idempotency:idempotency-jdbc is not on the class path: "
						+ "add it, or set idempotency.backend=memory to keep idempotency records in memory (lost on "
						+ "restart, not shared between instances)"));
	}

	@Test
	void aDataSourceWithoutTheJdbcModuleAndMemoryChosenKeepsRecordsInMemory() {
		this.runner.withClassLoader(new FilteredClassLoader(JdbcIdempotencyStore.class))
			.withBean(DataSource.class, () -> new DriverManagerDataSource("jdbc:h2:mem:unused"))
			.withPropertyValues("idempotency.backend=memory")
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class));
	}

	@Test
	void theJdbcStoreModuleWithoutSpringJdbcBacksOff() {
		this.runner.withClassLoader(new FilteredClassLoader(JdbcClient.class))
			.withBean(DataSource.class, () -> new DriverManagerDataSource("jdbc:h2:mem:unused"))
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class));
	}

	@Test
	void propertiesReachTheEngine() {
		this.runner
			.withPropertyValues("idempotency.lease-ttl=10s", "idempotency.lease-renewal=false",
					"idempotency.retention=2d", "idempotency.on-in-progress=reject", "idempotency.wait-timeout=5s",
					"idempotency.store-unavailable=fail-open", "idempotency.max-key-length=64")
			.run((context) -> assertThat(context.getBean(IdempotencyEngine.class).settings())
				.isEqualTo(EngineSettings.builder()
						.leaseTtl(Duration.ofSeconds(10))
						.leaseRenewal(false)
						.retention(Duration.ofDays(2))
						.onInProgress(InProgressPolicy.REJECT)
						.waitTimeout(Duration.ofSeconds(5))
						.storeUnavailable(StoreUnavailablePolicy.FAIL_OPEN)
						.maxKeyLength(64)
						.build()));
	}

	@Test
	void durationsWithoutUnitsAreSecondsAndRetentionDays() {
		this.runner.withPropertyValues("idempotency.lease-ttl=10", "idempotency.retention=3")
			.run((context) -> assertThat(context.getBean(IdempotencyEngine.class).settings())
				.satisfies((settings) -> {
					assertThat(settings.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
					assertThat(settings.retention()).isEqualTo(Duration.ofDays(3));
				}));
	}

	@Test
	void theLeaseRenewalIntervalIsAThirdOfTheLeaseUnlessSet() {
		this.runner.withPropertyValues("idempotency.lease-ttl=9s")
			.run((context) -> assertThat(context.getBean(IdempotencyEngine.class).settings().leaseRenewalInterval())
				.isEqualTo(Duration.ofSeconds(3)));
		this.runner.withPropertyValues("idempotency.lease-ttl=9s", "idempotency.lease-renewal-interval=2")
			.run((context) -> assertThat(context.getBean(IdempotencyEngine.class).settings())
				.satisfies((settings) -> {
					assertThat(settings.leaseRenewalInterval()).isEqualTo(Duration.ofSeconds(2));
					// a method with a lease of its own: the same fraction of it
					assertThat(settings.leaseRenewalInterval(Duration.ofSeconds(18))).isEqualTo(Duration.ofSeconds(4));
				}));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "0s", "-1s", "10s", "11s" })
	void aLeaseRenewalIntervalThatIsNotPositiveAndShorterThanTheLeaseFailsTheStart(String interval) {
		this.runner.withPropertyValues("idempotency.lease-ttl=10s", "idempotency.lease-renewal-interval=" + interval)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContaining("idempotency.lease-renewal-interval must be positive and shorter than "
							+ "idempotency.lease-ttl");
			});
	}

	@Test
	void onInProgressDefaultIsNotAValidPropertyValue() {
		this.runner.withPropertyValues("idempotency.on-in-progress=default").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("idempotency.on-in-progress must be 'wait' or 'reject'");
		});
	}

	@Test
	void withAMeterRegistryTheMetersAreRecorded() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> assertThat(context).getBean(IdempotencyObserver.class)
				.isInstanceOf(MicrometerIdempotencyObserver.class));
	}

	@Test
	void withoutAMeterRegistryNothingIsRecorded() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyObserver.class));
	}

}
