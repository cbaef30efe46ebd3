package io.github.idempotency.benchmarks;

import java.time.Duration;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The cost of the starter itself, with no network: the memory store, where a claim and a
 * completion are one {@code ConcurrentHashMap.compute} each.
 * <ul>
 * <li>{@code starter*}: the Spring-proxied {@code @Idempotent} method (SpEL key, engine,
 * Jackson result, memory store).</li>
 * <li>{@code bare*}: the same two store steps and the same Jackson write (first) or read
 * (duplicate), written by hand on the same {@link MemoryIdempotencyStore}.</li>
 * <li>{@code plainCall}: the same bean method called on the unproxied target.</li>
 * </ul>
 * The aspect's own overhead is {@code starterFirst} minus {@code bareFirst}; no round
 * trips, so any difference is CPU and allocation. Both first-delivery benchmarks also drop
 * the record of a key from {@link Keys#WINDOW} calls ago, so the live set (and the garbage
 * collector's work) does not grow with the run.
 */
public class MemoryBenchmark {

	@Benchmark
	public Receipt starterFirst(StarterState state, Keys keys) {
		Receipt receipt = state.proxy.charge(keys.next());
		forgetRetired(state.store, keys);
		return receipt;
	}

	@Benchmark
	public Receipt starterDuplicate(StarterState state, DuplicateKeys keys) {
		return state.proxy.charge(keys.next());
	}

	@Benchmark
	public Receipt plainCall(StarterState state, Keys keys) {
		return state.target.charge(keys.next());
	}

	@Benchmark
	public Receipt bareFirst(BareState state, Keys keys) {
		String key = keys.next();
		RecordId id = new RecordId(PaymentHandler.WORKFLOW, key);
		String owner = Owners.next();
		ClaimResult claim = state.store.claim(new ClaimRequest(id, owner, null, BareState.LEASE, BareState.RETENTION));
		if (claim.outcome() != ClaimOutcome.ACQUIRED) {
			throw new IllegalStateException("Not a first delivery: " + claim.outcome());
		}
		Receipt receipt = Receipt.of(key);
		claim.acquiredHandle().complete(state.writer.writeValueAsString(receipt));
		forgetRetired(state.store, keys);
		return receipt;
	}

	@Benchmark
	public Receipt bareDuplicate(BareState state, DuplicateKeys keys) {
		RecordId id = new RecordId(PaymentHandler.WORKFLOW, keys.next());
		ClaimResult claim = state.store.claim(new ClaimRequest(id, Owners.next(), null,
				BareState.LEASE, BareState.RETENTION));
		if (claim.outcome() != ClaimOutcome.DUPLICATE) {
			throw new IllegalStateException("Not a duplicate: " + claim.outcome());
		}
		return state.reader.readValue(claim.record().response());
	}

	/**
	 * The starter's application context on the memory backend.
	 */
	@State(Scope.Benchmark)
	public static class StarterState {

		ConfigurableApplicationContext context;

		PaymentHandler proxy;

		PaymentHandler target;

		IdempotencyStore store;

		@Setup(Level.Trial)
		public void start() throws Exception {
			this.context = BenchmarkContexts.memory();
			this.proxy = this.context.getBean(PaymentHandler.class);
			if (!AopUtils.isAopProxy(this.proxy)) {
				throw new IllegalStateException("PaymentHandler is not proxied");
			}
			this.target = (PaymentHandler) ((Advised) this.proxy).getTargetSource().getTarget();
			this.store = this.context.getBean(IdempotencyStore.class);
			for (String key : DuplicateKeys.all()) {
				this.proxy.charge(key);
			}
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.context.close();
		}

	}

	/**
	 * A bare {@link MemoryIdempotencyStore} and the same {@link JsonMapper} settings.
	 */
	@State(Scope.Benchmark)
	public static class BareState {

		static final Duration LEASE = Duration.ofSeconds(30);

		static final Duration RETENTION = Duration.ofMinutes(10);

		final MemoryIdempotencyStore store = new MemoryIdempotencyStore();

		final ObjectWriter writer = JsonMapper.builder().build().writerFor(Receipt.class);

		final ObjectReader reader = JsonMapper.builder().build().readerFor(Receipt.class);

		@Setup(Level.Trial)
		public void finishDuplicates() {
			for (String key : DuplicateKeys.all()) {
				RecordId id = new RecordId(PaymentHandler.WORKFLOW, key);
				this.store.claim(new ClaimRequest(id, "setup", null, LEASE, RETENTION))
					.acquiredHandle()
					.complete(this.writer.writeValueAsString(Receipt.of(key)));
			}
		}

	}

	/**
	 * Drops the record of the key handed out {@link Keys#WINDOW} calls ago (one map
	 * removal, the same in every first-delivery benchmark here), so the store's live set
	 * stays constant instead of growing for the whole run.
	 */
	static void forgetRetired(IdempotencyStore store, Keys keys) {
		String retired = keys.retired();
		if (retired != null) {
			store.delete(new RecordId(PaymentHandler.WORKFLOW, retired));
		}
	}

}
