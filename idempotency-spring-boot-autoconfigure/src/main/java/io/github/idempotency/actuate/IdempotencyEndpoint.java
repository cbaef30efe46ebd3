package io.github.idempotency.actuate;

import java.time.Duration;
import java.time.Instant;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.core.EngineSettings;
import io.github.idempotency.core.IdempotencyEngine;
import io.github.idempotency.core.StoreUnavailablePolicy;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code idempotency} Actuator endpoint: the backend and settings in use, one record
 * by workflow and key, and the manual release (deletion) of one record, for a key stuck
 * in progress or a failure to forget.
 */
@Endpoint(id = "idempotency")
public class IdempotencyEndpoint {

	private static final Log logger = LogFactory.getLog(IdempotencyEndpoint.class);

	private final IdempotencyEngine engine;

	public IdempotencyEndpoint(IdempotencyEngine engine) {
		this.engine = engine;
	}

	/**
	 * The backend and the settings in use.
	 * @return the description
	 */
	@ReadOperation
	public IdempotencyDescriptor idempotency() {
		EngineSettings settings = this.engine.settings();
		return new IdempotencyDescriptor(store().backend(),
				new SettingsDescriptor(settings.leaseTtl(), settings.leaseRenewal(), settings.retention(),
						settings.onInProgress(), settings.waitTimeout(), settings.storeUnavailable(),
						settings.maxKeyLength()));
	}

	/**
	 * One record.
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @return the record, or {@code null} (404) when there is none
	 */
	@ReadOperation
	public @Nullable RecordDescriptor record(@Selector String workflow, @Selector String key) {
		return store().find(new RecordId(workflow, key)).map(RecordDescriptor::of).orElse(null);
	}

	/**
	 * Deletes one record whatever its state: the next delivery of its key runs the
	 * operation again.
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @return whether a record was deleted
	 */
	@DeleteOperation
	public DeletedDescriptor delete(@Selector String workflow, @Selector String key) {
		RecordId id = new RecordId(workflow, key);
		boolean deleted = store().delete(id);
		if (deleted) {
			logger.info("Deleted the idempotency record of " + id + " through the actuator endpoint");
		}
		return new DeletedDescriptor(workflow, key, deleted);
	}

	private IdempotencyStore store() {
		return this.engine.store();
	}

	/**
	 * The backend and settings.
	 *
	 * @param backend the store's technology
	 * @param settings the engine's defaults
	 */
	public record IdempotencyDescriptor(String backend, SettingsDescriptor settings) {
	}

	/**
	 * The engine's defaults, as bound from {@code idempotency.*}.
	 *
	 * @param leaseTtl how long a claim is held without renewal
	 * @param leaseRenewal whether running claims are renewed
	 * @param retention how long a finished record is kept
	 * @param onInProgress what a call does when its key runs elsewhere
	 * @param waitTimeout how long a call waits for another run
	 * @param storeUnavailable what a call does when the store cannot be reached
	 * @param maxKeyLength the longest key accepted
	 */
	public record SettingsDescriptor(Duration leaseTtl, boolean leaseRenewal, Duration retention,
			InProgressPolicy onInProgress, Duration waitTimeout, StoreUnavailablePolicy storeUnavailable,
			int maxKeyLength) {
	}

	/**
	 * One record, as stored.
	 *
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @param status the state
	 * @param attempt 1 for the first run, incremented by each takeover
	 * @param owner the fencing token of the run that holds or held the claim
	 * @param leaseUntil when the lease of an in-progress record runs out
	 * @param recoveryPoint the last recovery point saved
	 * @param createdAt when the record was first claimed
	 * @param updatedAt when the record last changed
	 * @param expiresAt when the record may be deleted
	 * @param errorType the exception class name of a failed record
	 * @param errorMessage the exception message of a failed record
	 * @param responseSize the length of the stored response, {@code null} for none
	 * @param response the stored response (JSON), {@code null} for none
	 */
	public record RecordDescriptor(String workflow, String key, RecordStatus status, int attempt, String owner,
			Instant leaseUntil, @Nullable String recoveryPoint, Instant createdAt, Instant updatedAt,
			Instant expiresAt, @Nullable String errorType, @Nullable String errorMessage,
			@Nullable Integer responseSize, @Nullable String response) {

		static RecordDescriptor of(IdempotencyRecord record) {
			String response = record.response();
			return new RecordDescriptor(record.id().workflow(), record.id().key(), record.status(), record.attempt(),
					record.owner(), record.leaseUntil(), record.recoveryPoint(), record.createdAt(),
					record.updatedAt(), record.expiresAt(), record.errorType(), record.errorMessage(),
					(response != null) ? response.length() : null, response);
		}

	}

	/**
	 * The answer to a deletion.
	 *
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @param deleted whether a record existed and was deleted
	 */
	public record DeletedDescriptor(String workflow, String key, boolean deleted) {
	}

}
