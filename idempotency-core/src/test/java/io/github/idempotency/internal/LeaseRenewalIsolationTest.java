package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One renewal blocked in the store (a row lock, a slow server) never delays the renewals
 * of the other running claims.
 */
class LeaseRenewalIsolationTest {

	private final CountDownLatch unblock = new CountDownLatch(1);

	private final Map<String, AtomicInteger> renewals = new ConcurrentHashMap<>();

	private final IdempotencyEngine engine = new IdempotencyEngine(new BlockingRenewals(new MemoryIdempotencyStore()),
			JsonMapper.builder().build(), EngineSettings.defaults(), IdempotencyObserver.NONE);

	private final IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("renewals", String.class)
		.fingerprinted(false)
		.leaseTtl(Duration.ofMillis(150))
		.build());

	@AfterEach
	void close() {
		this.unblock.countDown();
		this.engine.close();
	}

	@Test
	void aBlockedRenewalDoesNotStarveTheOthers() throws Exception {
		CountDownLatch finish = new CountDownLatch(1);
		CompletableFuture<Object> blocked = run("blocked", finish);
		await().atMost(Duration.ofSeconds(10)).until(() -> renewals("blocked") >= 1);
		CompletableFuture<Object> healthy = run("healthy", finish);
		await().atMost(Duration.ofSeconds(10)).until(() -> renewals("healthy") >= 5);
		assertThat(renewals("blocked")).as("the blocked lease has one renewal under way, not more").isOne();
		this.unblock.countDown();
		finish.countDown();
		assertThat(blocked.get(10, TimeUnit.SECONDS)).isEqualTo("blocked");
		assertThat(healthy.get(10, TimeUnit.SECONDS)).isEqualTo("healthy");
	}

	private int renewals(String key) {
		AtomicInteger count = this.renewals.get(key);
		return (count != null) ? count.get() : 0;
	}

	private CompletableFuture<Object> run(String key, CountDownLatch finish) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				return this.engine.execute(this.operation, key, null, () -> {
					finish.await();
					return key;
				});
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	/** Counts renewals per key; those of the key "blocked" wait until the test ends. */
	private final class BlockingRenewals implements IdempotencyStore {

		private final IdempotencyStore delegate;

		BlockingRenewals(IdempotencyStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public ClaimResult claim(ClaimRequest request) {
			ClaimResult result = this.delegate.claim(request);
			ClaimHandle handle = result.handle();
			if (handle == null) {
				return result;
			}
			String key = request.id().key();
			return ClaimResult.acquired(result.record(), new ClaimHandle() {

				@Override
				public boolean complete(@Nullable String response) {
					return handle.complete(response);
				}

				@Override
				public boolean fail(Throwable failure) {
					return handle.fail(failure);
				}

				@Override
				public boolean release(Throwable failure) {
					return handle.release(failure);
				}

				@Override
				public boolean renew() {
					LeaseRenewalIsolationTest.this.renewals.computeIfAbsent(key, (k) -> new AtomicInteger())
						.incrementAndGet();
					if (key.equals("blocked")) {
						try {
							LeaseRenewalIsolationTest.this.unblock.await();
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					}
					return handle.renew();
				}

				@Override
				public boolean saveRecoveryPoint(String recoveryPoint) {
					return handle.saveRecoveryPoint(recoveryPoint);
				}

			});
		}

		@Override
		public java.util.Optional<IdempotencyRecord> find(RecordId id) {
			return this.delegate.find(id);
		}

		@Override
		public boolean delete(RecordId id) {
			return this.delegate.delete(id);
		}

	}

}
