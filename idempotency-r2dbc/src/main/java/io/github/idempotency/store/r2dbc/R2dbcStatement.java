package io.github.idempotency.store.r2dbc;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.r2dbc.core.DatabaseClient;

/**
 * A statement of {@link io.github.idempotency.store.sql.SqlStatements}, as written there
 * with named parameters ({@code :workflow}), which {@link DatabaseClient} expands as the
 * driver wants them ({@code $1} on PostgreSQL, {@code ?} on MariaDB; a name used twice is
 * bound everywhere it appears). It binds only the names the statement uses, each
 * {@code null} value as a {@code NULL} of text: every nullable parameter of the statements
 * is text.
 */
final class R2dbcStatement {

	/** A name after a colon that is not part of {@code ::}. */
	private static final Pattern NAME = Pattern.compile("(?<![:\\w]):([A-Za-z][A-Za-z0-9]*)");

	private final String sql;

	private final Set<String> names;

	R2dbcStatement(String sql) {
		this.sql = sql;
		Set<String> names = new LinkedHashSet<>();
		Matcher matcher = NAME.matcher(sql);
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		this.names = names;
	}

	/**
	 * The statement on {@code client} with its parameters bound.
	 * @param client the client
	 * @param values a value for each name the statement uses, and maybe others
	 * @return the statement, ready to run
	 * @throws IllegalArgumentException when a name the statement uses has no value
	 */
	DatabaseClient.GenericExecuteSpec on(DatabaseClient client, Map<String, ?> values) {
		DatabaseClient.GenericExecuteSpec spec = client.sql(this.sql);
		for (String name : this.names) {
			if (!values.containsKey(name)) {
				throw new IllegalArgumentException("No value for :" + name + " of " + this.sql);
			}
			Object value = values.get(name);
			spec = (value != null) ? spec.bind(name, value) : spec.bindNull(name, String.class);
		}
		return spec;
	}

	@Override
	public String toString() {
		return this.sql;
	}

}
