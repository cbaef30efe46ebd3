package io.github.idempotency.store.jdbc;

import java.util.List;

import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterUtils;
import org.springframework.jdbc.core.namedparam.ParsedSql;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A statement written with named parameters, made positional once, for the steps every
 * message takes: binding it copies values from an array, where a named statement would
 * substitute its names on every call (and the driver would then hash that fresh SQL
 * string again to find its prepared statement).
 * <p>
 * The names are parsed by Spring's {@link NamedParameterUtils}, as {@link JdbcClient}
 * parses them; a name may appear several times.
 */
final class PositionalStatement {

	private final String sql;

	private final int[] slots;

	/**
	 * @param namedSql the statement with named parameters
	 * @param names every name it may use; {@link #on} takes the values in this order
	 * @throws org.springframework.dao.InvalidDataAccessApiUsageException when the
	 * statement uses a name not in {@code names}
	 */
	PositionalStatement(String namedSql, List<String> names) {
		ParsedSql parsed = NamedParameterUtils.parseSqlStatement(namedSql);
		MapSqlParameterSource ownNames = new MapSqlParameterSource();
		names.forEach((name) -> ownNames.addValue(name, name));
		this.sql = NamedParameterUtils.substituteNamedParameters(parsed, ownNames);
		Object[] used = NamedParameterUtils.buildValueArray(parsed, ownNames, null);
		this.slots = new int[used.length];
		for (int i = 0; i < used.length; i++) {
			this.slots[i] = names.indexOf((String) used[i]);
		}
	}

	/**
	 * The statement on {@code jdbc} with its parameters bound.
	 * @param jdbc the client
	 * @param values one value per name, in the order of the names given
	 * @return the statement, ready to run
	 */
	JdbcClient.StatementSpec on(JdbcClient jdbc, Object... values) {
		Object[] parameters = new Object[this.slots.length];
		for (int i = 0; i < parameters.length; i++) {
			parameters[i] = values[this.slots[i]];
		}
		return jdbc.sql(this.sql).params(parameters);
	}

	@Override
	public String toString() {
		return this.sql;
	}

}
