package io.github.idempotency.autoconfigure;

import io.github.idempotency.store.ReadFirst;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the jdbc store auto-configuration per test, on an embedded H2.
 */
class JdbcStoreAutoConfigurationTest {

	private final String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + this.url, "spring.datasource.generate-unique-name=false");

	@Test
	void withADataSourceAndNoBackendTheStoreIsJdbc() {
		this.runner.run((context) -> assertThat(context.getBean(IdempotencyEngine.class).store())
			.isInstanceOf(JdbcIdempotencyStore.class));
	}

	@Test
	void theTableIsCreatedOnAnEmbeddedDatabase() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			assertThat(template.execute(IdempotentRequest.of("payment", "k1"), String.class, () -> "first"))
				.isEqualTo("first");
			assertThat(template.execute(IdempotentRequest.of("payment", "k1"), String.class, () -> "second"))
				.isEqualTo("first");
			assertThat(JdbcClient.create(context.getBean(DataSource.class))
				.sql("SELECT response FROM idempotency_record WHERE workflow = 'payment'")
				.query(String.class)
				.single()).isEqualTo("\"first\"");
		});
	}

	@Test
	void onMariaDbTheMySqlSchemaIsUsed() {
		this.runner.withPropertyValues("spring.datasource.url=" + TestServers.mariaDbUrl(),
				"idempotency.jdbc.initialize-schema=always")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(IdempotencyJdbcSchemaInitializer.class);
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				String key = UUID.randomUUID().toString();
				assertThat(template.execute(IdempotentRequest.of("mariadb", key), String.class, () -> "first"))
					.isEqualTo("first");
			});
	}

	@Test
	void initializeSchemaNeverCreatesNoInitializer() {
		TestDatabases.createTable(new DriverManagerDataSource(this.url, "sa", ""), "h2", "idempotency_record");
		this.runner.withPropertyValues("idempotency.jdbc.initialize-schema=never")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyJdbcSchemaInitializer.class)
				.hasSingleBean(JdbcIdempotencyStore.class));
	}

	@Test
	void theStoreAndTheCleanerWaitForTheSchemaInitializerWithoutOtherDatabaseInitialization() {
		this.runner.run((context) -> {
			assertThat(context.getBeanFactory().getBeanDefinition("idempotencyStore").getDependsOn())
				.contains("idempotencyJdbcSchemaInitializer");
			assertThat(context.getBeanFactory().getBeanDefinition("idempotencyJdbcCleaner").getDependsOn())
				.contains("idempotencyJdbcSchemaInitializer");
		});
	}

	@Test
	void cleanupRunsByDefaultAndAZeroIntervalTurnsItOff() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(ExpiredRecordsCleaner.class));
		this.runner.withPropertyValues("idempotency.jdbc.cleanup.interval=0")
			.run((context) -> assertThat(context).doesNotHaveBean(ExpiredRecordsCleaner.class));
	}

	@Test
	void claimsReadFirstAdaptivelyUnlessTold() {
		this.runner.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class))
			.hasFieldOrPropertyWithValue("readFirst", ReadFirst.ADAPTIVE));
		this.runner.withPropertyValues("idempotency.jdbc.read-first=never")
			.run((context) -> assertThat(context.getBean(JdbcIdempotencyStore.class))
				.hasFieldOrPropertyWithValue("readFirst", ReadFirst.NEVER));
	}

	@Test
	void namingAnotherBackendWinsOverTheDataSource() {
		this.runner.withPropertyValues("idempotency.backend=memory")
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class)
				.doesNotHaveBean(JdbcIdempotencyStore.class)
				.doesNotHaveBean(IdempotencyJdbcSchemaInitializer.class));
	}

	@Test
	void withoutSpringJdbcOnTheClassPathTheJdbcStoreBacksOff() {
		this.runner.withClassLoader(new FilteredClassLoader(JdbcClient.class))
			.withPropertyValues("idempotency.backend=memory")
			.run((context) -> assertThat(context).doesNotHaveBean(JdbcIdempotencyStore.class));
	}

	@Test
	void namingJdbcWithoutADataSourceFailsTheStartSayingWhatItNeeds() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempotency.backend=jdbc")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("jdbc needs a DataSource bean");
			});
	}

}
