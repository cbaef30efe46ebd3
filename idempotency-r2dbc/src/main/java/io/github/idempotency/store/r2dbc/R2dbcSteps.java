package io.github.idempotency.store.r2dbc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.sql.BatchCompletionSql;
import io.github.idempotency.store.sql.Fence;
import io.github.idempotency.store.sql.SqlStatements;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The steps of a claim after it was made, each one fenced statement: complete (one claim,
 * or many in one statement as the database's {@link BatchCompletionSql} says), fail,
 * release and extend.
 */
final class R2dbcSteps {

	/** The most claims one counted statement completes. */
	private static final int MAX_COUNTED_COMPLETIONS = 1000;

	/** The most characters of responses one counted statement carries. */
	private static final int MAX_COUNTED_CHARACTERS = 262_144;

	private final DatabaseClient client;

	private final Clock clock;

	private final BatchCompletionSql batchCompletion;

	private final Fenced leased;

	private final Fenced inTransaction;

	R2dbcSteps(SqlStatements statements, DatabaseClient client, Clock clock) {
		this.client = client;
		this.clock = clock;
		this.batchCompletion = statements.batchCompletion();
		this.leased = new Fenced(statements, Fence.LEASE);
		this.inTransaction = new Fenced(statements, Fence.TRANSACTION);
	}

	/** The statements of the steps under one fence. */
	private record Fenced(R2dbcStatement complete, R2dbcStatement fail, R2dbcStatement release,
			R2dbcStatement extend) {

		Fenced(SqlStatements statements, Fence fence) {
			this(new R2dbcStatement(statements.complete(fence)), new R2dbcStatement(statements.fail(fence)),
					new R2dbcStatement(statements.release(fence)), new R2dbcStatement(statements.extend(fence)));
		}

	}

	private Fenced under(Fence fence) {
		return (fence == Fence.LEASE) ? this.leased : this.inTransaction;
	}

	Mono<Boolean> complete(RecordId id, String owner, @Nullable String response, Duration retention, Fence fence) {
		return Mono.defer(() -> {
			Instant now = this.clock.instant();
			Map<String, @Nullable Object> values = owned(id, owner);
			values.put("response", response);
			values.put("now", now.toEpochMilli());
			values.put("expiresAt", now.plus(retention).toEpochMilli());
			return updatedOne(under(fence).complete(), values);
		});
	}

	/** Whether {@link #completeAll} completes many claims in one statement over arrays. */
	boolean completesAllAtOnce() {
		return this.batchCompletion instanceof BatchCompletionSql.OverArrays;
	}

	/**
	 * Completes many claims in one statement over arrays (only where
	 * {@link #completesAllAtOnce}).
	 * @return for each record whether it was completed
	 */
	Mono<boolean[]> completeAll(List<RecordId> ids, List<String> owners, List<@Nullable String> responses,
			List<Duration> retentions, Fence fence) {
		if (!(this.batchCompletion instanceof BatchCompletionSql.OverArrays sql)) {
			return Mono.error(new IllegalStateException("No completion over arrays here"));
		}
		return Mono.defer(() -> {
			Instant now = this.clock.instant();
			int size = ids.size();
			String[] workflows = new String[size];
			String[] keys = new String[size];
			Long[] expiresAts = new Long[size];
			for (int i = 0; i < size; i++) {
				workflows[i] = ids.get(i).workflow();
				keys[i] = ids.get(i).key();
				expiresAts[i] = now.plus(retentions.get(i)).toEpochMilli();
			}
			Map<String, Object> values = new HashMap<>();
			values.put("workflows", workflows);
			values.put("keys", keys);
			values.put("owners", owners.toArray(new String[0]));
			values.put("responses", responses.toArray(new String[0]));
			values.put("expiresAts", expiresAts);
			values.put("now", now.toEpochMilli());
			boolean[] completed = new boolean[size];
			return new R2dbcStatement((fence == Fence.LEASE) ? sql.leased() : sql.inTransaction()).on(this.client, values)
				.map((row) -> R2dbcRows.number(row, "position"))
				.all()
				.doOnNext((position) -> completed[position.intValue() - 1] = true)
				.then(Mono.fromSupplier(() -> completed));
		});
	}

	/**
	 * Whether {@link #completeCounted} completes these claims in one statement: where the
	 * database has one that counts them, for at most {@value #MAX_COUNTED_COMPLETIONS}
	 * claims whose responses hold at most {@value #MAX_COUNTED_CHARACTERS} characters.
	 */
	boolean countsCompletionsOf(List<@Nullable String> responses) {
		if (!(this.batchCompletion instanceof BatchCompletionSql.Counted) || responses.size() > MAX_COUNTED_COMPLETIONS) {
			return false;
		}
		long characters = 0;
		for (String response : responses) {
			characters += (response != null) ? response.length() : 0;
		}
		return characters <= MAX_COUNTED_CHARACTERS;
	}

	/**
	 * Completes claims in one statement (only where {@link #countsCompletionsOf}).
	 * @return whether it completed every claim: when not, it may have completed some
	 */
	Mono<Boolean> completeCounted(List<RecordId> ids, List<String> owners, List<@Nullable String> responses,
			List<Duration> retentions, Fence fence) {
		if (!(this.batchCompletion instanceof BatchCompletionSql.Counted sql)) {
			return Mono.error(new IllegalStateException("No counted completion here: ask countsCompletionsOf first"));
		}
		return Mono.defer(() -> {
			int rows = ids.size();
			Instant now = this.clock.instant();
			Map<String, @Nullable Object> values = new HashMap<>();
			values.put("now", now.toEpochMilli());
			for (int i = 0; i < rows; i++) {
				values.put("workflow" + i, ids.get(i).workflow());
				values.put("key" + i, ids.get(i).key());
				values.put("owner" + i, owners.get(i));
				values.put("response" + i, responses.get(i));
				values.put("expiresAt" + i, now.plus(retentions.get(i)).toEpochMilli());
			}
			return new R2dbcStatement(sql.completeAll().apply(fence, rows)).on(this.client, values)
				.fetch()
				.rowsUpdated()
				.map((count) -> count == rows);
		});
	}

	Mono<Boolean> fail(RecordId id, String owner, Throwable failure, Duration retention, Fence fence) {
		return Mono.defer(() -> {
			Instant now = this.clock.instant();
			Map<String, @Nullable Object> values = owned(id, owner);
			values.put("errorType", IdempotencyRecord.errorTypeOf(failure));
			values.put("errorMessage", IdempotencyRecord.errorMessageOf(failure));
			values.put("now", now.toEpochMilli());
			values.put("expiresAt", now.plus(retention).toEpochMilli());
			return updatedOne(under(fence).fail(), values);
		});
	}

	Mono<Boolean> release(RecordId id, String owner, Fence fence) {
		return Mono.defer(() -> updatedOne(under(fence).release(), owned(id, owner)));
	}

	/**
	 * Extends the lease to now + {@code leaseTtl}, with a recovery point when one is given,
	 * and keeps the record at least until the new lease's end + {@code retention}.
	 */
	Mono<Boolean> extend(RecordId id, String owner, @Nullable String recoveryPoint, Duration leaseTtl,
			Duration retention, Fence fence) {
		return Mono.defer(() -> {
			Instant now = this.clock.instant();
			Instant leaseUntil = now.plus(leaseTtl);
			Map<String, @Nullable Object> values = owned(id, owner);
			values.put("leaseUntil", leaseUntil.toEpochMilli());
			values.put("expiresAt", leaseUntil.plus(retention).toEpochMilli());
			values.put("now", now.toEpochMilli());
			values.put("recoveryPoint", recoveryPoint);
			return updatedOne(under(fence).extend(), values);
		});
	}

	private Mono<Boolean> updatedOne(R2dbcStatement statement, Map<String, @Nullable Object> values) {
		return statement.on(this.client, values).fetch().rowsUpdated().map((count) -> count == 1);
	}

	private static Map<String, @Nullable Object> owned(RecordId id, String owner) {
		Map<String, @Nullable Object> values = new HashMap<>();
		values.put("workflow", id.workflow());
		values.put("key", id.key());
		values.put("owner", owner);
		return values;
	}

}
