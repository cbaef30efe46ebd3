package io.github.idempotency.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The storage SPI: a few atomic operations on one record per {@link RecordId}. The
 * protocol (claim, run, complete, fail or release, renew while running, wait on a
 * conflict) belongs to the engine; a store only answers each step atomically.
 * <p>
 * An acquired claim comes with a {@link ClaimHandle}, the only way to change the claimed
 * record: its steps are fenced by the claim's owner. Expired records
 * ({@link IdempotencyRecord#isExpired}) count as absent. A store reports failures to
 * reach its server as unchecked exceptions; the engine turns them into
 * {@code IdempotencyStoreException}. A call the store refuses to serve (a misuse, such as
 * a claim that would have to write in a read-only transaction) is an
 * {@code IllegalStateException} or {@code IllegalArgumentException}, which the engine
 * throws as it is: never a reason to run the operation unprotected.
 * <p>
 * {@code IdempotencyStoreContract} (in the {@code idempotency-test} artifact) is the test
 * suite every implementation must pass.
 */
public interface IdempotencyStore {

	/**
	 * Atomically claims the record, or reports why it cannot be claimed. The fingerprint
	 * is compared first: an existing record whose fingerprint differs from a non-null
	 * fingerprint of the request answers {@link ClaimOutcome#MISMATCH}. A missing or
	 * expired record is created {@code IN_PROGRESS} with attempt 1; an {@code IN_PROGRESS}
	 * record whose lease ran out is taken over (attempt + 1, new owner, recovery point
	 * kept).
	 * @param request what to claim
	 * @return the outcome with the record it concerns, and for an acquired claim its
	 * handle
	 */
	ClaimResult claim(ClaimRequest request);

	/**
	 * Claims several records, as {@link #claim(ClaimRequest)} claims one: each request is
	 * claimed atomically on its own (the batch as a whole is not atomic) and answered at
	 * the same position. A record named twice is acquired at most once: a later request for
	 * a key an earlier request of the same call acquired answers
	 * {@link ClaimOutcome#IN_PROGRESS} with that claim's record.
	 * <p>
	 * When the store fails part way (or cannot answer a request inside the caller's
	 * transaction), the claims this call acquired are given back
	 * ({@link ClaimHandle#abandon()}) before the exception is thrown. The default claims one
	 * request after the other, so a store that does not override it works unchanged; a
	 * store that can claim many records in
	 * one round trip should.
	 * @param requests what to claim
	 * @return one result per request, in the order of the requests
	 */
	default List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		List<ClaimResult> results = new ArrayList<>(requests.size());
		try {
			for (ClaimRequest request : requests) {
				results.add(claim(request));
			}
		}
		catch (RuntimeException ex) {
			for (ClaimResult result : results) {
				if (result.handle() != null) {
					try {
						result.handle().abandon();
					}
					catch (RuntimeException releaseFailure) {
						ex.addSuppressed(releaseFailure);
					}
				}
			}
			throw ex;
		}
		return results;
	}

	/**
	 * Completes several claims that this store acquired, as {@link ClaimHandle#complete}
	 * completes one: each on its own, answered at the same position ({@code false} when
	 * that claim is no longer this run's).
	 * <p>
	 * The default completes one handle after the other; when one fails, the others are
	 * still tried and the first failure is thrown after them (the rest suppressed). A store
	 * that can complete many records in one round trip should override it.
	 * @param handles acquired claims of this store
	 * @param responses the serialized result of each claim, {@code null} for {@code void}
	 * @return for each handle whether its record was completed
	 */
	default List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		List<Boolean> completed = new ArrayList<>(handles.size());
		RuntimeException failure = null;
		for (int i = 0; i < handles.size(); i++) {
			try {
				completed.add(handles.get(i).complete(responses.get(i)));
			}
			catch (RuntimeException ex) {
				completed.add(false);
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
		return completed;
	}

	/**
	 * Reads a record that has not expired.
	 * @param id the record
	 * @return the record, or empty
	 */
	Optional<IdempotencyRecord> find(RecordId id);

	/**
	 * Removes a record whatever its state or owner: the manual release of a stuck key.
	 * @param id the record
	 * @return {@code true} when a record was removed
	 */
	boolean delete(RecordId id);

	/**
	 * The name of this store's technology, used as the {@code backend} tag of metrics.
	 * @return a short lower-case name such as {@code jdbc}
	 */
	default String backend() {
		return "custom";
	}

}
