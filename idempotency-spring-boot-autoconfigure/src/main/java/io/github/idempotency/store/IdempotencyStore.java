package io.github.idempotency.store;

import java.time.Duration;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The storage SPI: a few atomic operations on one record per {@link RecordId}. The
 * protocol (claim, run, complete, fail or release, renew while running, wait on a
 * conflict) belongs to the engine; a store only answers each step atomically.
 * <p>
 * Every step that changes a claimed record is fenced by its owner: it succeeds only while
 * the record is still {@code IN_PROGRESS} and owned by {@code owner}, and returns
 * {@code false} otherwise. Expired records ({@link IdempotencyRecord#isExpired}) count as
 * absent. A store reports failures to reach its server as unchecked exceptions; the
 * engine turns them into {@code IdempotencyStoreException}.
 * <p>
 * {@code IdempotencyStoreContract} (in this module's test-jar) is the test suite every
 * implementation must pass.
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
	 * @return the outcome with the record it concerns
	 */
	ClaimResult claim(ClaimRequest request);

	/**
	 * Marks an owned record {@code COMPLETED} with its response, kept for {@code retention}.
	 * @param id the record
	 * @param owner the fencing token of the claim
	 * @param response the serialized result, {@code null} for {@code void}
	 * @param retention how long to keep the record
	 * @return {@code false} when the record is no longer owned by {@code owner}
	 */
	boolean complete(RecordId id, String owner, @Nullable String response, Duration retention);

	/**
	 * Marks an owned record {@code FAILED}, kept for {@code retention}.
	 * @param id the record
	 * @param owner the fencing token of the claim
	 * @param errorType the exception class name
	 * @param errorMessage the exception message
	 * @param retention how long to keep the record
	 * @return {@code false} when the record is no longer owned by {@code owner}
	 */
	boolean fail(RecordId id, String owner, String errorType, @Nullable String errorMessage, Duration retention);

	/**
	 * Removes an owned record, so that the next delivery runs the operation again.
	 * @param id the record
	 * @param owner the fencing token of the claim
	 * @return {@code false} when the record is no longer owned by {@code owner}
	 */
	boolean release(RecordId id, String owner);

	/**
	 * Extends the lease of an owned record to now + {@code leaseTtl}.
	 * @param id the record
	 * @param owner the fencing token of the claim
	 * @param leaseTtl the new lease duration
	 * @return {@code false} when the record is no longer owned by {@code owner}
	 */
	boolean renew(RecordId id, String owner, Duration leaseTtl);

	/**
	 * Durably stores a recovery point on an owned record and renews its lease.
	 * @param id the record
	 * @param owner the fencing token of the claim
	 * @param recoveryPoint the application's marker
	 * @param leaseTtl the new lease duration
	 * @return {@code false} when the record is no longer owned by {@code owner}
	 */
	boolean saveRecoveryPoint(RecordId id, String owner, String recoveryPoint, Duration leaseTtl);

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
