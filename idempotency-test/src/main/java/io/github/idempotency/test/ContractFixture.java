package io.github.idempotency.test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.test.IdempotencyStoreContract.ThreadTask;
import org.jspecify.annotations.Nullable;

/**
 * What each part of the contract asks of the test it runs in: the store under test, its
 * clock, the test's workflow and the helpers that claim in it. {@link IdempotencyStoreContract}
 * implements it, and every part of the suite with it.
 */
interface ContractFixture {

	IdempotencyStore store();

	MutableClock clock();

	String workflow();

	RecordId id(String key);

	ClaimRequest request(RecordId id, String owner, @Nullable String fingerprint);

	ClaimResult claim(String key, String owner, @Nullable String fingerprint);

	ClaimResult claim(String key, String owner, Duration lease, Duration retention);

	ClaimHandle handle(String owner);

	Instant assertKeptForTheRetention(String key, Instant leaseEnd);

	<T> List<T> race(int threads, ThreadTask<T> task) throws Exception;

}
