package io.github.idempotency.sample.webflux;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.connection.init.ConnectionFactoryInitializer;
import org.springframework.r2dbc.connection.init.ResourceDatabasePopulator;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * The database, with Spring's R2DBC support only: a {@code ConnectionFactory} on
 * {@code sample.r2dbc-url} (H2 in memory through {@code r2dbc-h2}), its
 * {@code DatabaseClient}, the reactive transaction manager {@code @Transactional} uses, and
 * the tables created at start: the {@code payment} table and the idempotency table, from
 * the schema script the relational stores ship for H2 ({@code idempotency.r2dbc.initialize-schema}
 * knows the PostgreSQL and MariaDB scripts only). There is no JDBC {@code DataSource}, so the
 * starter chooses the r2dbc store on this {@code ConnectionFactory}.
 * <p>
 * With {@code spring-boot-starter-r2dbc} Spring Boot would configure the first three from
 * {@code spring.r2dbc.url}; the sample declares them with Spring's R2DBC support only.
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
class DatabaseConfiguration {

	@Bean
	ConnectionFactory connectionFactory(@Value("${sample.r2dbc-url}") String url) {
		return ConnectionFactories.get(url);
	}

	@Bean
	DatabaseClient databaseClient(ConnectionFactory connectionFactory) {
		return DatabaseClient.create(connectionFactory);
	}

	@Bean
	R2dbcTransactionManager transactionManager(ConnectionFactory connectionFactory) {
		return new R2dbcTransactionManager(connectionFactory);
	}

	@Bean
	ConnectionFactoryInitializer schema(ConnectionFactory connectionFactory) {
		ConnectionFactoryInitializer initializer = new ConnectionFactoryInitializer();
		initializer.setConnectionFactory(connectionFactory);
		initializer.setDatabasePopulator(new ResourceDatabasePopulator(new ClassPathResource("schema.sql"),
				new ClassPathResource("io/github/idempotency/store/jdbc/schema-h2.sql")));
		return initializer;
	}

}
