package io.github.idempotency.benchmarks;

import java.util.Map;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * PostgreSQL inside the caller's transaction, for a {@code void} operation: the transaction
 * is the in-progress marker, so a first delivery is one {@code INSERT ... ON CONFLICT DO
 * NOTHING} of the finished record and the commit that the business writes need anyway;
 * a concurrent duplicate waits on the row lock until that commit.
 * <ul>
 * <li>{@code starter*}: a {@code @Transactional @Idempotent void} method on the starter's jdbc
 * store; the claim joins the method's transaction.</li>
 * <li>{@code bare*}: by hand with {@code TransactionTemplate} and {@code JdbcClient}. First:
 * 1 statement + commit; duplicate: the insert finds the row, one {@code SELECT} reads its
 * status, commit (nothing written).</li>
 * <li>{@code springIntegration*}, {@code camel*}: the peers of {@link JdbcBenchmark}, called
 * inside the same kind of transaction (their statements join it, as they would join a
 * consumer's): Spring Integration's insert-if-absent, Camel's {@code SELECT COUNT(*)} then
 * {@code INSERT}; then the commit.</li>
 * </ul>
 */
public class JdbcInTransactionBenchmark {

	@Benchmark
	public void starterFirst(Starter state, Keys keys) {
		state.handler.chargeInTransaction(keys.next());
	}

	@Benchmark
	public void starterDuplicate(Starter state, DuplicateKeys keys) {
		state.handler.chargeInTransaction(keys.next());
	}

	@Benchmark
	public String bareFirst(BarePostgres state, Keys keys) {
		String key = keys.next();
		return state.servers.transactions.execute((tx) -> {
			if (state.insertFinished(BarePostgres.WORKFLOW_IN_TRANSACTION, key, Owners.next()) != 1) {
				throw new IllegalStateException("Not a first delivery: " + key);
			}
			return key;
		});
	}

	@Benchmark
	public String bareDuplicate(BarePostgres state, DuplicateKeys keys) {
		String key = keys.next();
		return state.servers.transactions.execute((tx) -> {
			if (state.insertFinished(BarePostgres.WORKFLOW_IN_TRANSACTION, key, Owners.next()) != 0) {
				throw new IllegalStateException("Not a duplicate: " + key);
			}
			return state.status(BarePostgres.WORKFLOW_IN_TRANSACTION, key);
		});
	}

	@Benchmark
	public Boolean springIntegrationFirst(JdbcBenchmark.SpringIntegration state, Keys keys) {
		return state.servers.transactions
			.execute((tx) -> Expect.answer(true, state.selector.accept(PeerMessages.of(keys.next()))));
	}

	@Benchmark
	public Boolean springIntegrationDuplicate(JdbcBenchmark.SpringIntegration state, DuplicateKeys keys) {
		return state.servers.transactions
			.execute((tx) -> Expect.answer(false, state.selector.accept(PeerMessages.of(keys.next()))));
	}

	@Benchmark
	public Boolean camelFirst(JdbcBenchmark.Camel state, Keys keys) {
		String key = keys.next();
		return state.servers.transactions
			.execute((tx) -> Expect.answer(true, state.repository.add(key) && state.repository.confirm(key)));
	}

	@Benchmark
	public Boolean camelDuplicate(JdbcBenchmark.Camel state, DuplicateKeys keys) {
		return state.servers.transactions.execute((tx) -> Expect.answer(false, state.repository.add(keys.next())));
	}

	/**
	 * The starter with {@code idempotency.backend=jdbc}, delivering through the
	 * transactional method.
	 */
	@State(Scope.Benchmark)
	public static class Starter extends StarterState {

		@Override
		protected String backend() {
			return "jdbc";
		}

		@Override
		protected Map<String, Object> properties() {
			return StarterProperties.SERVERS;
		}

		@Override
		protected void deliver(String key) {
			this.handler.chargeInTransaction(key);
		}

	}

}
