package io.github.idempotency.autoconfigure;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;
import org.springframework.core.io.Resource;

/**
 * Creates the jdbc store's table from the schema file the jar ships for the platform,
 * as {@code idempotency.jdbc.initialize-schema} says. MariaDB uses the MySQL schema.
 * <p>
 * The shipped files create {@code idempotency_record}; with another
 * {@code idempotency.jdbc.table-name} they create that table instead, its index named
 * after it ({@code <table>_expires_at}, without the schema: an index lives in its table's
 * schema). A script of your own ({@code idempotency.jdbc.schema}) runs as it is.
 */
public class IdempotencyJdbcSchemaInitializer
		extends PropertiesBasedDataSourceScriptDatabaseInitializer<IdempotencyJdbcProperties> {

	/**
	 * The platforms whose schema file is another's.
	 */
	static final Map<DatabaseDriver, String> PLATFORMS = Map.of(DatabaseDriver.MARIADB, "mysql");

	/**
	 * The table the shipped schema files create.
	 */
	static final String SHIPPED_TABLE = ShippedSchemaScripts.SHIPPED_TABLE;

	/**
	 * The table the shipped scripts are to create when it is not theirs; else null.
	 */
	private final @Nullable String tableName;

	public IdempotencyJdbcSchemaInitializer(DataSource dataSource, IdempotencyJdbcProperties properties) {
		super(dataSource, properties, PLATFORMS);
		boolean shippedScript = properties.getDefaultSchemaLocation().equals(properties.getSchema());
		this.tableName = (shippedScript && !SHIPPED_TABLE.equals(properties.getTableName()))
				? properties.getTableName() : null;
	}

	@Override
	protected void runScripts(Scripts scripts) {
		String table = this.tableName;
		if (table == null) {
			super.runScripts(scripts);
			return;
		}
		Charset encoding = (scripts.getEncoding() != null) ? scripts.getEncoding() : StandardCharsets.UTF_8;
		List<Resource> renamed = new ArrayList<>();
		for (Resource script : scripts) {
			renamed.add(ShippedSchemaScripts.renamed(script, table, encoding));
		}
		super.runScripts(new Scripts(renamed).continueOnError(scripts.isContinueOnError())
			.separator(scripts.getSeparator())
			.encoding(encoding));
	}

}
