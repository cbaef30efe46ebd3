package io.github.idempotency.benchmarks;

import java.util.Map;

import javax.sql.DataSource;

import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.integration.selector.MetadataStoreSelector;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * PostgreSQL on loopback, each step its own short transaction (autocommit), through one
 * Hikari pool. Every committed write waits for its WAL flush ({@code fsync}), which is
 * what bounds first deliveries.
 * <ul>
 * <li>{@code starter*}: the proxied {@code @Idempotent} method on the starter's jdbc store,
 * no transaction around it: the claim's insert and the completion's update, each its own
 * short transaction (first delivery: 2 commits); a duplicate's claim finds the finished row
 * and reads it.</li>
 * <li>{@code bare*}: the protocol by hand with {@code JdbcClient}: {@code INSERT ... ON
 * CONFLICT DO NOTHING} (claim), then {@code UPDATE ... WHERE owner = ?} (complete). First: 2
 * statements, 2 commits; duplicate: the insert finds the row, then one {@code SELECT}
 * reads the stored result (2 statements, no write). {@code bareSelectDuplicate}: that
 * {@code SELECT} alone, the floor of any duplicate.</li>
 * <li>{@code springIntegration*}: {@code MetadataStoreSelector.accept} on a
 * {@code JdbcMetadataStore}: one {@code INSERT ... SELECT ... HAVING COUNT(*)=0 ON CONFLICT DO
 * NOTHING}; a duplicate adds a {@code SELECT}. First: 1 statement, 1 commit. No in-progress
 * state, no result, no expiry.</li>
 * <li>{@code camel*}: {@code JdbcMessageIdRepository.add} (+ {@code confirm}, a no-op): in one
 * transaction {@code SELECT COUNT(*)} then {@code INSERT}. First: 2 statements, 1 commit;
 * check-then-insert (a racing duplicate fails on the primary key instead of being
 * answered); duplicate: 1 statement. No in-progress state, no result, no expiry.</li>
 * </ul>
 */
public class JdbcBenchmark {

	@Benchmark
	public Receipt starterFirst(Starter state, Keys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt starterDuplicate(Starter state, DuplicateKeys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt bareFirst(BarePostgres state, Keys keys) {
		String key = keys.next();
		String owner = Owners.next();
		if (state.claim(BarePostgres.WORKFLOW, key, owner) != 1) {
			throw new IllegalStateException("Not a first delivery: " + key);
		}
		Receipt receipt = Receipt.of(key);
		if (state.complete(BarePostgres.WORKFLOW, key, owner, state.servers.writer.writeValueAsString(receipt)) != 1) {
			throw new IllegalStateException("Lost the claim of " + key);
		}
		return receipt;
	}

	@Benchmark
	public Receipt bareDuplicate(BarePostgres state, DuplicateKeys keys) {
		String key = keys.next();
		if (state.claim(BarePostgres.WORKFLOW, key, Owners.next()) != 0) {
			throw new IllegalStateException("Not a duplicate: " + key);
		}
		return state.servers.reader.readValue(state.response(BarePostgres.WORKFLOW, key));
	}

	/**
	 * The floor of a duplicate: one primary-key {@code SELECT} of the stored result, by hand,
	 * and its deserialization; no claim at all.
	 */
	@Benchmark
	public Receipt bareSelectDuplicate(BarePostgres state, DuplicateKeys keys) {
		return state.servers.reader.readValue(state.response(BarePostgres.WORKFLOW, keys.next()));
	}

	@Benchmark
	public boolean springIntegrationFirst(SpringIntegration state, Keys keys) {
		return Expect.answer(true, state.selector.accept(PeerMessages.of(keys.next())));
	}

	@Benchmark
	public boolean springIntegrationDuplicate(SpringIntegration state, DuplicateKeys keys) {
		return Expect.answer(false, state.selector.accept(PeerMessages.of(keys.next())));
	}

	@Benchmark
	public boolean camelFirst(Camel state, Keys keys) {
		String key = keys.next();
		return Expect.answer(true, state.repository.add(key) && state.repository.confirm(key));
	}

	@Benchmark
	public boolean camelDuplicate(Camel state, DuplicateKeys keys) {
		return Expect.answer(false, state.repository.add(keys.next()));
	}

	/**
	 * The starter with {@code idempotency.backend=jdbc}, its table holding the
	 * {@link JdbcBatchBenchmark#FILLER_ROWS} filler rows and analyzed with them. Analyzed
	 * nearly empty (a new table), PostgreSQL keeps a generic plan that scans the whole table
	 * for each completion until the next {@code ANALYZE}, so that every call gets slower as
	 * the run fills the table (docs/benchmarks.md).
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
		@Setup(Level.Trial)
		public void start() {
			super.start();
			JdbcBatchBenchmark.fill(JdbcClient.create(this.context.getBean(DataSource.class)), "idempotency_record",
					JdbcBatchBenchmark.STARTER_FILLER);
		}

	}

	/**
	 * Spring Integration's idempotent receiver selector on a {@link JdbcMetadataStore}
	 * (its {@code INT_METADATA_STORE} table, region {@value #REGION}).
	 */
	@State(Scope.Benchmark)
	public static class SpringIntegration {

		static final String REGION = "bench";

		ServersState servers;

		MetadataStoreSelector selector;

		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			servers.jdbc.sql("""
					CREATE TABLE IF NOT EXISTS INT_METADATA_STORE (
						METADATA_KEY VARCHAR(255) NOT NULL,
						METADATA_VALUE VARCHAR(4000),
						REGION VARCHAR(100) NOT NULL,
						constraint INT_METADATA_STORE_PK primary key (METADATA_KEY, REGION)
					)""").update();
			clear();
			JdbcMetadataStore store = new JdbcMetadataStore(servers.dataSource);
			store.setRegion(REGION);
			store.afterPropertiesSet();
			store.start();
			this.selector = new MetadataStoreSelector(PeerMessages::key, store);
			for (String key : DuplicateKeys.all()) {
				this.selector.accept(PeerMessages.of(key));
			}
			ServersState.vacuum(servers.jdbc, "INT_METADATA_STORE");
		}

		@TearDown(Level.Trial)
		public void clear() {
			this.servers.jdbc.sql("DELETE FROM INT_METADATA_STORE WHERE REGION = ?").param(REGION).update();
		}

	}

	/**
	 * Camel's {@link JdbcMessageIdRepository} (its {@code CAMEL_MESSAGEPROCESSED} table,
	 * created by the repository).
	 */
	@State(Scope.Benchmark)
	public static class Camel {

		static final String PROCESSOR = "bench-camel";

		ServersState servers;

		JdbcMessageIdRepository repository;

		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			this.repository = new JdbcMessageIdRepository(servers.dataSource, PROCESSOR);
			this.repository.start();
			this.repository.clear();
			for (String key : DuplicateKeys.all()) {
				this.repository.add(key);
			}
			ServersState.vacuum(servers.jdbc, "CAMEL_MESSAGEPROCESSED");
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.repository.clear();
			this.repository.stop();
		}

	}

}
