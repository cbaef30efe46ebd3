package io.github.idempotency.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;

/**
 * The schema scripts the relational stores ship ({@code idempotency-sql}), made to create
 * another table than theirs, for the jdbc and the r2dbc stores' initializers (apart from
 * the jdbc one, which an application without JDBC cannot load).
 */
final class ShippedSchemaScripts {

	/** The table the shipped schema files create. */
	static final String SHIPPED_TABLE = "idempotency_record";

	/** The shipped files' names: the table, and its index when followed by {@code _expires_at}. */
	private static final Pattern SHIPPED_NAMES = Pattern.compile("\\b" + SHIPPED_TABLE + "(_expires_at)?\\b");

	private ShippedSchemaScripts() {
	}

	/**
	 * The shipped {@code script} creating {@code table} instead, its index named after it
	 * ({@code <table>_expires_at}, without the schema).
	 */
	static Resource renamed(Resource script, String table, Charset encoding) {
		String index = table.substring(table.lastIndexOf('.') + 1) + "_expires_at";
		try {
			String sql = SHIPPED_NAMES.matcher(script.getContentAsString(encoding))
				.replaceAll((name) -> Matcher.quoteReplacement((name.group(1) != null) ? index : table));
			return new ByteArrayResource(sql.getBytes(encoding), script.getDescription() + " for table " + table);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + script.getDescription(), ex);
		}
	}

}
