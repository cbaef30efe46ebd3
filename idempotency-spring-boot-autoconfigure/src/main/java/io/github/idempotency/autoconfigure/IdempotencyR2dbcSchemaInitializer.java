package io.github.idempotency.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

import io.r2dbc.spi.ConnectionFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.r2dbc.connection.init.ResourceDatabasePopulator;

/**
 * Creates the r2dbc store's table at start-up from the jdbc store's shipped schema script
 * for the database (MariaDB uses the MySQL script), under the configured table name, with
 * Spring's R2DBC script support. The scripts create the table only when it does not exist.
 */
class IdempotencyR2dbcSchemaInitializer implements InitializingBean {

	private final ConnectionFactory connectionFactory;

	private final IdempotencyR2dbcProperties properties;

	IdempotencyR2dbcSchemaInitializer(ConnectionFactory connectionFactory, IdempotencyR2dbcProperties properties) {
		this.connectionFactory = connectionFactory;
		this.properties = properties;
	}

	@Override
	public void afterPropertiesSet() {
		String product = this.connectionFactory.getMetadata().getName().toLowerCase(Locale.ROOT);
		String platform = product.contains("postgres") ? "postgresql" : "mysql";
		Resource script = new ClassPathResource("io/github/idempotency/store/jdbc/schema-" + platform + ".sql");
		String table = this.properties.getTableName();
		if (!ShippedSchemaScripts.SHIPPED_TABLE.equals(table)) {
			script = ShippedSchemaScripts.renamed(script, table, StandardCharsets.UTF_8);
		}
		// at start-up, on the thread that creates the beans: it may wait
		new ResourceDatabasePopulator(script).populate(this.connectionFactory).block();
	}

}
