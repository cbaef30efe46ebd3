package io.github.idempotency.autoconfigure;

import java.util.UUID;

import javax.sql.DataSource;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.r2dbc.core.DatabaseClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the r2dbc store auto-configuration per test, on a real PostgreSQL.
 */
class R2dbcStoreAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	private final ApplicationContextRunner withConnectionFactory = this.runner.withBean(ConnectionFactory.class,
			R2dbcStoreAutoConfigurationTest::connectionFactory);

	@Test
	void withAConnectionFactoryAndNoDataSourceTheStoreIsR2dbc() {
		this.withConnectionFactory.run((context) -> {
			assertThat(context).hasSingleBean(R2dbcIdempotencyStore.class)
				.hasSingleBean(ReactiveIdempotencyStore.class)
				.hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class).backend()).isEqualTo("r2dbc");
			assertThat(context.getBean(IdempotencyEngine.class).store().backend()).isEqualTo("r2dbc");
		});
	}

	@Test
	void withADataSourceToTheStoreIsJdbc() {
		this.withConnectionFactory.withBean(DataSource.class, R2dbcStoreAutoConfigurationTest::h2)
			.run((context) -> assertThat(context).hasSingleBean(JdbcIdempotencyStore.class)
				.doesNotHaveBean(R2dbcIdempotencyStore.class));
	}

	@Test
	void namingTheR2dbcBackendPicksItOverADataSource() {
		this.withConnectionFactory.withBean(DataSource.class, R2dbcStoreAutoConfigurationTest::h2)
			.withPropertyValues("idempotency.backend=r2dbc")
			.run((context) -> assertThat(context).hasSingleBean(R2dbcIdempotencyStore.class)
				.doesNotHaveBean(JdbcIdempotencyStore.class));
	}

	@Test
	void aStoreOfTheUsersWins() {
		this.withConnectionFactory.withBean(IdempotencyStore.class, MemoryIdempotencyStore::new)
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyStore.class)
				.hasSingleBean(MemoryIdempotencyStore.class)
				.doesNotHaveBean(R2dbcIdempotencyStore.class));
	}

	@Test
	void withoutSpringR2dbcOnTheClassPathTheR2dbcStoreBacksOff() {
		this.withConnectionFactory.withClassLoader(new FilteredClassLoader(DatabaseClient.class))
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class)
				.doesNotHaveBean(R2dbcIdempotencyStore.class));
	}

	@Test
	void namingR2dbcWithoutItsModuleFailsTheStartNamingTheModule() {
		this.withConnectionFactory.withClassLoader(new FilteredClassLoader(R2dbcIdempotencyStore.class))
			.withPropertyValues("idempotency.backend=r2dbc")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContaining("io.github.idempotency:idempotency-r2dbc");
			});
	}

	@Test
	void withInitializeSchemaAlwaysTheTableIsCreatedUnderItsName() {
		String table = "idempotency_r2dbc_" + UUID.randomUUID().toString().replace("-", "");
		this.withConnectionFactory
			.withPropertyValues("idempotency.r2dbc.initialize-schema=always", "idempotency.r2dbc.table-name=" + table)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotencyR2dbcSchemaInitializer.class);
				DatabaseClient client = DatabaseClient.create(context.getBean(ConnectionFactory.class));
				assertThat(client.sql("SELECT COUNT(*) AS n FROM " + table).map((row) -> row.get("n", Long.class))
					.one()
					.block()).isZero();
				client.sql("DROP TABLE " + table).then().block();
			});
	}

	@Test
	void byDefaultNoTableIsCreated() {
		this.withConnectionFactory.run((context) -> assertThat(context)
			.doesNotHaveBean(IdempotencyR2dbcSchemaInitializer.class));
	}

	@Test
	void theCleanupRunsUnlessItsIntervalIsZero() {
		this.withConnectionFactory.run((context) -> assertThat(context).hasSingleBean(ExpiredRecordsCleaner.class));
		this.withConnectionFactory.withPropertyValues("idempotency.r2dbc.cleanup.interval=0")
			.run((context) -> assertThat(context).doesNotHaveBean(ExpiredRecordsCleaner.class));
	}

	@Test
	void aCleanupRunInterruptedAsTheApplicationStopsEndsQuietlyTheThreadStillInterrupted() {
		this.withConnectionFactory.run((context) -> {
			ExpiredRecordsCleaner cleaner = context.getBean(ExpiredRecordsCleaner.class);
			Thread.currentThread().interrupt();
			try {
				assertThat(cleaner.cleanUp()).isZero();
				assertThat(Thread.currentThread().isInterrupted()).isTrue();
			}
			finally {
				Thread.interrupted();
			}
		});
	}

	@Test
	void theCleanupKeepsThePaceItsPropertiesSet() {
		this.withConnectionFactory.run((context) -> {
			IdempotencyJdbcProperties.Cleanup cleanup = context.getBean(IdempotencyR2dbcProperties.class).getCleanup();
			assertThat(cleanup.getDutyCycle()).isEqualTo(0.2);
			assertThat(cleanup.getMaxRowsPerSecond()).isEqualTo(1200);
		});
		this.withConnectionFactory
			.withPropertyValues("idempotency.r2dbc.cleanup.duty-cycle=0.5",
					"idempotency.r2dbc.cleanup.max-rows-per-second=300")
			.run((context) -> {
				IdempotencyJdbcProperties.Cleanup cleanup = context.getBean(IdempotencyR2dbcProperties.class)
					.getCleanup();
				assertThat(cleanup.getDutyCycle()).isEqualTo(0.5);
				assertThat(cleanup.getMaxRowsPerSecond()).isEqualTo(300);
			});
	}

	private static DataSource h2() {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL("jdbc:h2:mem:r2dbc-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
		return dataSource;
	}

	private static ConnectionFactory connectionFactory() {
		return ConnectionFactories.get(TestServers.r2dbcUrl(TestServers.postgresUrl()));
	}

}
