package io.github.idempotency.benchmarks;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each benchmark's state sets up and each benchmark method takes the path it claims to
 * measure, once, on the servers {@link Servers} finds (PostgreSQL, Redis, MariaDB). JMH itself
 * never runs in the build.
 */
class BenchmarksTest {

	private static final ServersState servers = new ServersState();

	@BeforeAll
	static void start() {
		servers.start();
	}

	@AfterAll
	static void stop() {
		servers.stop();
	}

	@Test
	void memoryStarterStoresTheFirstDeliveryAndReplaysDuplicates() throws Exception {
		MemoryBenchmark benchmark = new MemoryBenchmark();
		MemoryBenchmark.StarterState state = new MemoryBenchmark.StarterState();
		state.start();
		try {
			Receipt first = benchmark.starterFirst(state, new Keys());
			assertThat(state.store.find(new RecordId(PaymentHandler.WORKFLOW, first.key())))
				.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			assertThat(benchmark.starterDuplicate(state, new DuplicateKeys()).status()).isEqualTo("CHARGED");
			assertThat(benchmark.plainCall(state, new Keys())).isNotNull();
		}
		finally {
			state.stop();
		}
	}

	@Test
	void httpStoresTheFirstRequestAndReplaysOnBothStacks() {
		HttpBenchmark benchmark = new HttpBenchmark();
		HttpBenchmark.Servers state = new HttpBenchmark.Servers();
		state.start();
		try {
			List<String> sent = new java.util.ArrayList<>();
			Keys keys = new Keys() {

				@Override
				public String next() {
					sent.add(super.next());
					return sent.get(sent.size() - 1);
				}

			};
			assertThat(benchmark.mvcFirst(state, keys)).isEqualTo(200);
			assertThat(benchmark.webfluxFirst(state, keys)).isEqualTo(200);
			assertThat(state.mvcContext.getBean(io.github.idempotency.store.IdempotencyStore.class)
				.find(new RecordId("bench-http", "-|" + sent.get(0))))
				.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			assertThat(state.webfluxContext.getBean(io.github.idempotency.store.IdempotencyStore.class)
				.find(new RecordId("bench-http", "-|" + sent.get(1))))
				.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			assertThat(benchmark.mvcReplay(state, new DuplicateKeys())).isEqualTo(200);
			assertThat(benchmark.webfluxReplay(state, new DuplicateKeys())).isEqualTo(200);
			assertThat(benchmark.mvcPlain(state, keys)).isEqualTo(200);
			assertThat(benchmark.webfluxPlain(state, keys)).isEqualTo(200);
		}
		finally {
			state.stop();
		}
	}

	@Test
	void r2dbcAndJdbcStoresTakeBothPaths() {
		R2dbcStoreBenchmark benchmark = new R2dbcStoreBenchmark();
		benchmark.start();
		try {
			Keys keys = new Keys();
			DuplicateKeys duplicates = new DuplicateKeys();
			assertThat(benchmark.jdbcFirst(keys)).isTrue();
			assertThat(benchmark.r2dbcFirst(keys)).isTrue();
			assertThat(benchmark.jdbcDuplicate(duplicates)).isEqualTo(io.github.idempotency.store.ClaimOutcome.DUPLICATE);
			assertThat(benchmark.r2dbcDuplicate(duplicates)).isEqualTo(io.github.idempotency.store.ClaimOutcome.DUPLICATE);
		}
		finally {
			benchmark.stop();
		}
	}

	@ParameterizedTest
	@org.junit.jupiter.params.provider.ValueSource(strings = { "nonBlocking", "scheduler" })
	void webfluxPathsAnswerFirstRequestsAndReplays(String path) {
		WebFluxPathBenchmark benchmark = new WebFluxPathBenchmark();
		benchmark.clients = 4;
		benchmark.path = path;
		benchmark.start();
		try {
			assertThat(benchmark.first()).isEqualTo(4);
			assertThat(benchmark.replay()).isEqualTo(4);
		}
		finally {
			benchmark.stop();
		}
	}

	@Test
	void memoryBareTakesBothPaths() {
		MemoryBenchmark benchmark = new MemoryBenchmark();
		MemoryBenchmark.BareState state = new MemoryBenchmark.BareState();
		state.finishDuplicates();
		Receipt first = benchmark.bareFirst(state, new Keys());
		assertThat(state.store.find(new RecordId(PaymentHandler.WORKFLOW, first.key()))).isPresent();
		assertThat(benchmark.bareDuplicate(state, new DuplicateKeys())).isNotNull();
	}

	@Test
	void redisBareStoresTheFirstDeliveryAndReplaysDuplicates() {
		RedisBenchmark benchmark = new RedisBenchmark();
		RedisBenchmark.Bare state = new RedisBenchmark.Bare();
		state.finishDuplicates(servers);
		Receipt first = benchmark.bareFirst(state, new Keys());
		assertThat(servers.redis.opsForValue().get(RedisBenchmark.Bare.PREFIX + first.key())).startsWith("C|{");
		assertThat(benchmark.bareDuplicate(state, new DuplicateKeys()).status()).isEqualTo("CHARGED");
	}

	@Test
	void redisPeersTakeBothPaths() {
		RedisBenchmark benchmark = new RedisBenchmark();
		RedisBenchmark.SpringIntegration integration = new RedisBenchmark.SpringIntegration();
		integration.start(servers);
		RedisBenchmark.Camel camel = new RedisBenchmark.Camel();
		camel.start(servers);
		try {
			assertThat(benchmark.springIntegrationFirst(integration, new Keys())).isTrue();
			assertThat(benchmark.springIntegrationDuplicate(integration, new DuplicateKeys())).isFalse();
			assertThat(benchmark.camelFirst(camel, new Keys())).isTrue();
			assertThat(benchmark.camelDuplicate(camel, new DuplicateKeys())).isFalse();
		}
		finally {
			integration.clear();
			camel.stop();
		}
	}

	@Test
	void postgresBareStoresTheFirstDeliveryAndReplaysDuplicates() {
		BarePostgres state = new BarePostgres();
		state.start(servers);
		try {
			JdbcBenchmark benchmark = new JdbcBenchmark();
			Receipt first = benchmark.bareFirst(state, new Keys());
			assertThat(state.response(BarePostgres.WORKFLOW, first.key())).contains("\"CHARGED\"");
			assertThat(benchmark.bareDuplicate(state, new DuplicateKeys()).status()).isEqualTo("CHARGED");
			assertThat(benchmark.bareSelectDuplicate(state, new DuplicateKeys()).status()).isEqualTo("CHARGED");
			JdbcInTransactionBenchmark inTransaction = new JdbcInTransactionBenchmark();
			String key = inTransaction.bareFirst(state, new Keys());
			assertThat(state.status(BarePostgres.WORKFLOW_IN_TRANSACTION, key)).isEqualTo("COMPLETED");
			assertThat(inTransaction.bareDuplicate(state, new DuplicateKeys())).isEqualTo("COMPLETED");
		}
		finally {
			state.clear();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "arrays", "alike" })
	void jdbcBatchInputInsertsABatchInEitherForm(String form) {
		JdbcBatchInputBenchmark benchmark = new JdbcBatchInputBenchmark();
		benchmark.form = form;
		benchmark.start();
		try {
			benchmark.clear();
			assertThat(benchmark.insert()).isEqualTo(JdbcBatchInputBenchmark.BATCH);
			assertThat(benchmark.insert()).isEqualTo(JdbcBatchInputBenchmark.BATCH);
		}
		finally {
			benchmark.stop();
		}
	}

	@Test
	void postgresPeersTakeBothPaths() {
		JdbcBenchmark benchmark = new JdbcBenchmark();
		JdbcBenchmark.SpringIntegration integration = new JdbcBenchmark.SpringIntegration();
		integration.start(servers);
		JdbcBenchmark.Camel camel = new JdbcBenchmark.Camel();
		camel.start(servers);
		try {
			assertThat(benchmark.springIntegrationFirst(integration, new Keys())).isTrue();
			assertThat(benchmark.springIntegrationDuplicate(integration, new DuplicateKeys())).isFalse();
			assertThat(benchmark.camelFirst(camel, new Keys())).isTrue();
			assertThat(benchmark.camelDuplicate(camel, new DuplicateKeys())).isFalse();
			JdbcInTransactionBenchmark inTransaction = new JdbcInTransactionBenchmark();
			assertThat(inTransaction.springIntegrationFirst(integration, new Keys())).isTrue();
			assertThat(inTransaction.springIntegrationDuplicate(integration, new DuplicateKeys())).isFalse();
			assertThat(inTransaction.camelFirst(camel, new Keys())).isTrue();
			assertThat(inTransaction.camelDuplicate(camel, new DuplicateKeys())).isFalse();
		}
		finally {
			integration.clear();
			camel.stop();
		}
	}

	@Test
	void redisBatchesTakeTheirPaths() {
		RedisBatchBenchmark benchmark = new RedisBatchBenchmark();
		RedisBatchBenchmark.Batch batch = new RedisBatchBenchmark.Batch();
		batch.size = 10;
		RedisBatchBare bare = new RedisBatchBare();
		bare.finishDuplicates(servers);
		List<Receipt> first = benchmark.bareFirst(bare, batch, new Keys());
		assertThat(first).hasSize(10);
		assertThat(servers.redis.opsForValue().get(RedisBatchBare.PREFIX + first.get(9).key()))
			.startsWith("C|{");
		assertThat(benchmark.bareDuplicate(bare, batch)).extracting(Receipt::status).containsOnly("CHARGED");
		List<Receipt> pipelined = benchmark.barePipelinedFirst(bare, batch, new Keys());
		assertThat(servers.redis.opsForValue().get(RedisBatchBare.PREFIX + pipelined.get(9).key()))
			.startsWith("C|{");
		assertThat(benchmark.barePipelinedDuplicate(bare, batch)).extracting(Receipt::status)
			.containsOnly("CHARGED");
		RedisBatchPeers.SpringIntegration integration = new RedisBatchPeers.SpringIntegration();
		integration.start(servers);
		RedisBatchPeers.Camel camel = new RedisBatchPeers.Camel();
		camel.start(servers);
		try {
			assertThat(benchmark.springIntegrationFirst(integration, batch, new Keys())).isEqualTo(10);
			assertThat(benchmark.springIntegrationDuplicate(integration, batch)).isEqualTo(10);
			assertThat(benchmark.camelFirst(camel, batch, new Keys())).isEqualTo(10);
			assertThat(benchmark.camelDuplicate(camel, batch)).isEqualTo(10);
		}
		finally {
			integration.clear();
			camel.stop();
		}
	}

	@Test
	void postgresBatchesTakeTheirPaths() {
		JdbcBatchBenchmark benchmark = new JdbcBatchBenchmark();
		BatchSize size = new BatchSize();
		size.batch = 10;
		JdbcBatchBenchmark.Starter starter = new JdbcBatchBenchmark.Starter();
		starter.start();
		JdbcBatchBare bare = new JdbcBatchBare();
		bare.start(servers);
		JdbcBatchBare.OnStarterTable bareOnStarterTable = new JdbcBatchBare.OnStarterTable();
		bareOnStarterTable.start(servers);
		JdbcBenchmark.SpringIntegration integration = new JdbcBenchmark.SpringIntegration();
		integration.start(servers);
		JdbcBenchmark.Camel camel = new JdbcBenchmark.Camel();
		camel.start(servers);
		try {
			assertThat(benchmark.starterFirst(starter, size, new Keys())).hasSize(10).doesNotContainNull();
			assertThat(benchmark.starterDuplicate(starter, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
			assertThat(benchmark.starterInTransactionFirst(starter, size, new Keys())).hasSize(10)
				.doesNotContainNull();
			assertThat(benchmark.starterInTransactionDuplicate(starter, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
			assertThat(benchmark.bareInTransactionFirst(bare, size, new Keys())).hasSize(10);
			assertThat(benchmark.bareFirst(bare, size, new Keys())).hasSize(10);
			assertThat(benchmark.bareDuplicate(bare, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
			assertThat(benchmark.bareOnStarterTableFirst(bareOnStarterTable, size, new Keys())).hasSize(10);
			assertThat(benchmark.bareOnStarterTableInTransactionFirst(bareOnStarterTable, size, new Keys()))
				.hasSize(10);
			assertThat(benchmark.bareOnStarterTableDuplicate(bareOnStarterTable, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
			assertThat(benchmark.springIntegrationFirst(integration, size, new Keys())).isEqualTo(10);
			assertThat(benchmark.springIntegrationDuplicate(integration, size, new DuplicateKeys())).isZero();
			assertThat(benchmark.camelFirst(camel, size, new Keys())).isEqualTo(10);
			assertThat(benchmark.camelDuplicate(camel, size, new DuplicateKeys())).isZero();
		}
		finally {
			starter.stop();
			integration.clear();
			camel.stop();
		}
	}

	@Test
	void mariadbStarterAndBareTakeEveryPath() {
		MariaDbBenchmark benchmark = new MariaDbBenchmark();
		BatchSize size = new BatchSize();
		size.batch = 10;
		MariaDbBenchmark.Starter starter = new MariaDbBenchmark.Starter();
		starter.start();
		MariaDbServers mariadb = new MariaDbServers();
		mariadb.start();
		MariaDbBare bare = new MariaDbBare();
		bare.start(mariadb);
		MariaDbBare.OnStarterTable bareOnStarterTable = new MariaDbBare.OnStarterTable();
		bareOnStarterTable.start(mariadb);
		try {
			assertThat(starter.store.find(new RecordId(PaymentHandler.WORKFLOW,
					benchmark.starterFirst(starter, new Keys()).key())))
				.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			assertThat(benchmark.starterDuplicate(starter, new DuplicateKeys()).status()).isEqualTo("CHARGED");
			assertThat(benchmark.starterBatchFirst(starter, size, new Keys())).hasSize(10).doesNotContainNull();
			assertThat(benchmark.starterBatchDuplicate(starter, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
			assertThat(benchmark.bareFirst(bare, new Keys())).isNotNull();
			assertThat(benchmark.bareDuplicate(bare, new DuplicateKeys()).status()).isEqualTo("CHARGED");
			assertThat(benchmark.starterBatchInTransactionFirst(starter, size, new Keys())).hasSize(10)
				.doesNotContainNull();
			assertThat(benchmark.bareBatchFirst(bare, size, new Keys())).hasSize(10);
			assertThat(benchmark.bareBatchInTransactionFirst(bare, size, new Keys())).hasSize(10);
			assertThat(benchmark.bareBatchDuplicate(bare, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
			assertThat(benchmark.bareOnStarterTableBatchFirst(bareOnStarterTable, size, new Keys())).hasSize(10);
			assertThat(benchmark.bareOnStarterTableBatchInTransactionFirst(bareOnStarterTable, size, new Keys()))
				.hasSize(10);
			assertThat(benchmark.bareOnStarterTableBatchDuplicate(bareOnStarterTable, size)).hasSize(10)
				.allSatisfy((receipt) -> assertThat(receipt.status()).isEqualTo("CHARGED"));
		}
		finally {
			starter.stop();
			mariadb.stop();
		}
	}

	@Test
	void redisAndHybridStarterBatchesStoreFirstDeliveriesAndReplayDuplicates() {
		RedisBatchBenchmark benchmark = new RedisBatchBenchmark();
		RedisBatchBenchmark.Batch batch = new RedisBatchBenchmark.Batch();
		batch.size = 10;
		RedisBatchBenchmark.RedisStarter redis = new RedisBatchBenchmark.RedisStarter();
		redis.start();
		try {
			List<Receipt> first = benchmark.redisStarterFirst(redis, batch, new Keys());
			assertThat(redis.store.find(new RecordId(RedisBatchBenchmark.WORKFLOW, first.get(9).key())))
				.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			assertThat(benchmark.redisStarterDuplicate(redis, batch)).extracting(Receipt::status)
				.containsOnly("CHARGED");
		}
		finally {
			redis.stop();
		}
		RedisBatchBenchmark.HybridStarter hybrid = new RedisBatchBenchmark.HybridStarter();
		hybrid.start();
		try {
			List<Receipt> first = benchmark.hybridStarterFirst(hybrid, batch, new Keys());
			assertThat(hybrid.store.find(new RecordId(RedisBatchBenchmark.WORKFLOW, first.get(9).key())))
				.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED));
			assertThat(benchmark.hybridStarterDuplicate(hybrid, batch)).extracting(Receipt::status)
				.containsOnly("CHARGED");
		}
		finally {
			hybrid.stop();
		}
	}

}
