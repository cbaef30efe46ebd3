/**
 * The SQL the relational stores share ({@code jdbc}, {@code r2dbc}), for store
 * implementations, not for applications: one statement source per database
 * ({@link io.github.idempotency.store.sql.SqlStatements}), what each database can do in
 * one statement, and the schema scripts, which keep their class path
 * ({@code io/github/idempotency/store/jdbc/schema-*.sql}). Nothing here runs a statement.
 */
@NullMarked
package io.github.idempotency.store.sql;

import org.jspecify.annotations.NullMarked;
