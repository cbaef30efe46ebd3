package io.github.idempotency.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.IdempotencyRuntime;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code idempotency} Actuator endpoint: the backend and settings in use, one record
 * by workflow and key (an HTTP handler method's key by its caller's scope too), and the
 * manual release (deletion) of one record, for a key stuck in progress or a failure to
 * forget.
 * <p>
 * A record's stored values (its response, error message and recovery point: payment
 * receipts, personal data) are shown as Spring Boot shows the values of {@code env} and
 * {@code configprops}: {@code management.endpoint.idempotency.show-values} is
 * {@link Show#NEVER} by default, and each value then reads {@value #MASK}. Over HTTP
 * {@link IdempotencyEndpointWebExtension} decides {@link Show#WHEN_AUTHORIZED} by the
 * caller's roles; other technologies (JMX) count as authorized, as for {@code env}.
 */
@Endpoint(id = "idempotency")
public class IdempotencyEndpoint {

	/** What a stored value that is not shown reads. */
	public static final String MASK = "******";

	private static final Log logger = LogFactory.getLog(IdempotencyEndpoint.class);

	private final IdempotencyEngine engine;

	private final Show showValues;

	/**
	 * An endpoint that never shows stored values.
	 * @param engine the engine whose store is read
	 * @throws IllegalArgumentException when {@code engine} is not the starter's
	 */
	public IdempotencyEndpoint(IdempotencyRuntime engine) {
		this(engine, Show.NEVER);
	}

	/**
	 * An endpoint that shows stored values as {@code showValues} says.
	 * @param engine the engine whose store is read
	 * @param showValues when stored values are shown
	 * @throws IllegalArgumentException when {@code engine} is not the starter's
	 */
	public IdempotencyEndpoint(IdempotencyRuntime engine, Show showValues) {
		this.engine = IdempotencyEngine.of(engine);
		this.showValues = showValues;
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
	 * One record: {@code key} as given, else as an anonymous HTTP caller's key.
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @return the record, or {@code null} when there is none
	 * @see #record(String, String, String)
	 */
	public @Nullable RecordDescriptor record(String workflow, String key) {
		return record(workflow, key, null);
	}

	/**
	 * One record. An HTTP handler method's key is stored with its caller's scope
	 * ({@code -|7b4c} for an anonymous caller, {@code 5:alice|7b4c} for alice): with
	 * {@code scope}, the key of that caller is read; without it, {@code key} as given, then
	 * the anonymous caller's.
	 * @param workflow the workflow
	 * @param key the idempotency key, as the caller sent it (or as stored)
	 * @param scope the HTTP caller whose key it is (the principal's name, or what
	 * {@code idempotency.web.principal} names), or {@code null}
	 * @return the record, or {@code null} (404) when there is none
	 */
	@ReadOperation
	public @Nullable RecordDescriptor record(@Selector String workflow, @Selector String key, @Nullable String scope) {
		return record(workflow, key, scope, this.showValues.isShown(true));
	}

	@Nullable RecordDescriptor record(String workflow, String key, @Nullable String scope, boolean showValues) {
		for (String stored : storedKeys(key, scope)) {
			Optional<IdempotencyRecord> record = store().find(new RecordId(workflow, stored));
			if (record.isPresent()) {
				return RecordDescriptor.of(record.get(), showValues);
			}
		}
		return null;
	}

	/**
	 * What a read that found no record says: the keys looked up and how an HTTP caller's
	 * key is named.
	 */
	static RecordNotFoundDescriptor notFound(String workflow, String key, @Nullable String scope) {
		List<String> keys = storedKeys(key, scope);
		String message = "No record of workflow '" + workflow + "' under the key" + ((keys.size() > 1) ? "s " : " ")
				+ String.join(" or ", keys) + ". " + (hasScope(scope)
						? "The key of the HTTP caller '" + scope + "' is stored as " + keys.get(0) + "."
						: "An HTTP handler method's key is stored with its caller's scope (" + keys.get(1)
								+ " for an anonymous caller): name an authenticated caller with ?scope=<name>.");
		return new RecordNotFoundDescriptor(workflow, key, hasScope(scope) ? scope : null, keys, message);
	}

	/**
	 * Deletes one record whatever its state, {@code key} as given, else as an anonymous
	 * HTTP caller's key: the next delivery of its key runs the operation again.
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @return whether a record was deleted
	 * @see #delete(String, String, String)
	 */
	public DeletedDescriptor delete(String workflow, String key) {
		return delete(workflow, key, null);
	}

	/**
	 * Deletes one record whatever its state: the next delivery of its key runs the
	 * operation again. The record is found as {@link #record(String, String, String)} finds
	 * it.
	 * @param workflow the workflow
	 * @param key the idempotency key, as the caller sent it (or as stored)
	 * @param scope the HTTP caller whose key it is, or {@code null}
	 * @return the key deleted, as stored, and whether a record was deleted
	 */
	@DeleteOperation
	public DeletedDescriptor delete(@Selector String workflow, @Selector String key, @Nullable String scope) {
		for (String stored : storedKeys(key, scope)) {
			RecordId id = new RecordId(workflow, stored);
			if (store().delete(id)) {
				logger.info("Deleted the idempotency record of " + id + " through the actuator endpoint");
				return new DeletedDescriptor(workflow, stored, true);
			}
		}
		return new DeletedDescriptor(workflow, key, false);
	}

	/**
	 * The keys a record of {@code key} may be stored under, in the order they are tried:
	 * the key of the caller {@code scope} names ({@link KeyScope}); without one, the key as
	 * given and the anonymous HTTP caller's.
	 */
	private static List<String> storedKeys(String key, @Nullable String scope) {
		if (hasScope(scope)) {
			return List.of(String.valueOf(KeyScope.scoped(key, scope)));
		}
		return List.of(key, String.valueOf(KeyScope.scoped(key, null)));
	}

	private static boolean hasScope(@Nullable String scope) {
		return scope != null && !scope.isEmpty();
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
	 * @param recoveryPoint the last recovery point saved ({@value IdempotencyEndpoint#MASK}
	 * unless values are shown)
	 * @param createdAt when the record was first claimed
	 * @param updatedAt when the record last changed
	 * @param expiresAt when the record may be deleted
	 * @param errorType the exception class name of a failed record
	 * @param errorMessage the exception message of a failed record
	 * ({@value IdempotencyEndpoint#MASK} unless values are shown)
	 * @param responseSize the length of the stored response, {@code null} for none
	 * @param response the stored response (JSON), {@code null} for none
	 * ({@value IdempotencyEndpoint#MASK} unless values are shown)
	 */
	public record RecordDescriptor(String workflow, String key, RecordStatus status, int attempt, String owner,
			Instant leaseUntil, @Nullable String recoveryPoint, Instant createdAt, Instant updatedAt,
			Instant expiresAt, @Nullable String errorType, @Nullable String errorMessage,
			@Nullable Integer responseSize, @Nullable String response) {

		static RecordDescriptor of(IdempotencyRecord record, boolean showValues) {
			String response = record.response();
			return new RecordDescriptor(record.id().workflow(), record.id().key(), record.status(), record.attempt(),
					record.owner(), record.leaseUntil(), value(record.recoveryPoint(), showValues), record.createdAt(),
					record.updatedAt(), record.expiresAt(), record.errorType(),
					value(record.errorMessage(), showValues), (response != null) ? response.length() : null,
					value(response, showValues));
		}

		private static @Nullable String value(@Nullable String value, boolean show) {
			return (value == null || show) ? value : MASK;
		}

	}

	/**
	 * The answer over HTTP to a read that found no record (with the status 404).
	 *
	 * @param workflow the workflow
	 * @param key the idempotency key asked for
	 * @param scope the HTTP caller asked for, {@code null} for none
	 * @param lookedUp the keys looked up, as a record would be stored under them
	 * @param message what was looked up, and how to name an HTTP caller's key
	 */
	public record RecordNotFoundDescriptor(String workflow, String key, @Nullable String scope, List<String> lookedUp,
			String message) {
	}

	/**
	 * The answer to a deletion.
	 *
	 * @param workflow the workflow
	 * @param key the idempotency key, as stored when a record was deleted
	 * @param deleted whether a record existed and was deleted
	 */
	public record DeletedDescriptor(String workflow, String key, boolean deleted) {
	}

}
