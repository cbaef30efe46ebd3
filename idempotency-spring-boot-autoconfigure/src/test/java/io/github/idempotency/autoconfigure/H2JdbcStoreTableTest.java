package io.github.idempotency.autoconfigure;

import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

class H2JdbcStoreTableTest extends JdbcStoreTableTests {

	private final String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";

	@Override
	protected String url() {
		return this.url;
	}

	@Override
	protected String platform() {
		return "h2";
	}

	@Override
	protected String createSchema() {
		String name = "idem_" + UUID.randomUUID().toString().replace("-", "");
		jdbc().sql("CREATE SCHEMA " + name).update();
		return name;
	}

	@Override
	protected DataSource database() {
		// the user Spring Boot connects an embedded database with, who then owns it
		return new DriverManagerDataSource(this.url, "sa", "");
	}

}
