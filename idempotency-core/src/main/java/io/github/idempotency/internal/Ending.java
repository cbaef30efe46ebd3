package io.github.idempotency.internal;

import io.github.idempotency.observe.StoreOperation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotentResultNotStoredException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;

/**
 * How a run ended, as its record is to say: the one decision of what an ending stores,
 * whatever the shape of the call (single, batch item, asynchronous result).
 */
sealed interface Ending {

	/** The step that stores it, for the meters. */
	StoreOperation step();

	/**
	 * One attempt to store it on its claim.
	 * @return {@code false} when the claim is no longer the run's
	 */
	boolean storeOn(ClaimHandle claim);

	/** What is stored, for a log line: "the result of ". */
	String what();

	/** The message of the store error that kept it from being stored. */
	String notStored(RecordId id);

	/** What did not happen when the claim was lost before it was stored. */
	default String lost() {
		return "its failure was not recorded";
	}

	/** The status a record stored by an earlier attempt of it has, {@code null} when it cannot tell. */
	default @Nullable RecordStatus status() {
		return null;
	}

	/** Whether a store error is worth another attempt (a release is not: the next delivery runs again anyway). */
	default boolean retried() {
		return false;
	}

	/** How it ends when the transaction the run was part of rolled back: its writes are gone. */
	Ending afterRollback();

	/** How it ends when the transaction the run was part of committed. */
	default Ending afterCommit() {
		return this;
	}

	/** The operation returned; its result, written. */
	record Completed(@Nullable String response) implements Ending {

		@Override
		public StoreOperation step() {
			return StoreOperation.COMPLETE;
		}

		@Override
		public boolean storeOn(ClaimHandle claim) {
			return claim.complete(this.response);
		}

		@Override
		public String what() {
			return "the result of ";
		}

		@Override
		public String notStored(RecordId id) {
			return "The result of " + id + " could not be stored; the operation ran and its record stays in progress "
					+ "until its lease runs out";
		}

		@Override
		public String lost() {
			return "its result was not stored";
		}

		@Override
		public RecordStatus status() {
			return RecordStatus.COMPLETED;
		}

		@Override
		public boolean retried() {
			return true;
		}

		@Override
		public Ending afterRollback() {
			return new Abandoned();
		}

	}

	/**
	 * The operation failed for good (a {@code recordFailureFor} type), or returned a result
	 * that cannot be written ({@link IdempotentResultNotStoredException}): recorded and
	 * replayed, never run again.
	 */
	record Failed(Throwable failure) implements Ending {

		@Override
		public StoreOperation step() {
			return StoreOperation.FAIL;
		}

		@Override
		public boolean storeOn(ClaimHandle claim) {
			return claim.fail(this.failure);
		}

		@Override
		public String what() {
			return "the failure of ";
		}

		@Override
		public String notStored(RecordId id) {
			return "The failure of " + id + " could not be recorded; its record stays in progress until its lease "
					+ "runs out, then a delivery may run the operation again";
		}

		@Override
		public RecordStatus status() {
			return RecordStatus.FAILED;
		}

		@Override
		public boolean retried() {
			return true;
		}

		@Override
		public Ending afterRollback() {
			// an unwritable result's operation is rolled back: it may run again
			return (this.failure instanceof IdempotentResultNotStoredException) ? new Abandoned() : this;
		}

	}

	/** The operation failed in a way the next delivery may retry: the key is given up. */
	record Released(Throwable failure) implements Ending {

		@Override
		public StoreOperation step() {
			return StoreOperation.RELEASE;
		}

		@Override
		public boolean storeOn(ClaimHandle claim) {
			return claim.release(this.failure);
		}

		@Override
		public String what() {
			return "the release of ";
		}

		@Override
		public String notStored(RecordId id) {
			return "The key of " + id + " could not be released; its record stays in progress until its lease runs out";
		}

		@Override
		public Ending afterRollback() {
			return this;
		}

		@Override
		public Ending afterCommit() {
			// its writes committed all the same: running it again would repeat them
			return new Failed(this.failure);
		}

	}

	/** The operation never ran (its batch stopped before it, or gave its claims back): given back. */
	record Abandoned() implements Ending {

		@Override
		public StoreOperation step() {
			return StoreOperation.RELEASE;
		}

		@Override
		public boolean storeOn(ClaimHandle claim) {
			return claim.abandon();
		}

		@Override
		public String what() {
			return "the release of ";
		}

		@Override
		public String notStored(RecordId id) {
			return "The key of " + id + " could not be given back; its record stays in progress until its lease runs "
					+ "out";
		}

		@Override
		public String lost() {
			return "it was not given back";
		}

		@Override
		public Ending afterRollback() {
			return this;
		}

	}

}
