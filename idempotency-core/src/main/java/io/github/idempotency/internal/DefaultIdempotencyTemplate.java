package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import org.springframework.core.ParameterizedTypeReference;

/**
 * {@link IdempotencyTemplate} on the {@link IdempotencyEngine}. Each distinct request
 * shape (workflow, result type, settings) is prepared once and cached.
 */
public final class DefaultIdempotencyTemplate implements IdempotencyTemplate {

	private final IdempotencyEngine engine;

	private final Map<OperationDefinition, IdempotentOperation> operations = new ConcurrentHashMap<>();

	public DefaultIdempotencyTemplate(IdempotencyEngine engine) {
		this.engine = engine;
	}

	@Override
	public <T> @Nullable T execute(IdempotentRequest request, Class<T> resultType, Supplier<T> action) {
		return execute(request, (Type) resultType, action);
	}

	@Override
	public <T> @Nullable T execute(IdempotentRequest request, ParameterizedTypeReference<T> resultType,
			Supplier<T> action) {
		return execute(request, resultType.getType(), action);
	}

	@Override
	public void run(IdempotentRequest request, Runnable action) {
		execute(request, void.class, () -> {
			action.run();
			return null;
		});
	}

	@Override
	public <T> List<@Nullable T> executeAll(List<IdempotentRequest> requests, Class<T> resultType,
			Function<IdempotentRequest, T> action) {
		return executeAll(requests, (Type) resultType, action);
	}

	@Override
	public <T> List<@Nullable T> executeAll(List<IdempotentRequest> requests, ParameterizedTypeReference<T> resultType,
			Function<IdempotentRequest, T> action) {
		return executeAll(requests, resultType.getType(), action);
	}

	@SuppressWarnings("unchecked")
	private <T> List<@Nullable T> executeAll(List<IdempotentRequest> requests, Type resultType,
			Function<IdempotentRequest, T> action) {
		if (requests.isEmpty()) {
			return List.of();
		}
		IdempotentRequest first = requests.get(0);
		List<BatchItem> items = new ArrayList<>(requests.size());
		for (IdempotentRequest request : requests) {
			if (!sameOperation(first, request)) {
				throw new IllegalArgumentException("The requests of one batch must share their workflow and "
						+ "settings, and all have a payload or none; " + request + " differs from " + first);
			}
			items.add(new BatchItem(request, request.key(), request.payload()));
		}
		IdempotentOperation operation = this.operations.computeIfAbsent(definition(first, resultType),
				this.engine::prepare);
		try {
			return (List<@Nullable T>) (List<?>) this.engine.executeAll(operation, items, ItemFailure.FAILURES,
					(positions, results) -> {
						for (int j = 0; j < positions.length; j++) {
							try {
								results[j] = action.apply(requests.get(positions[j]));
							}
							catch (Throwable ex) {
								throw new ItemFailure(j, ex);
							}
						}
					});
		}
		catch (Throwable ex) {
			throw rethrow(ex);
		}
	}

	private static OperationDefinition definition(IdempotentRequest request, Type resultType) {
		return OperationDefinition.of(request.workflow(), resultType)
			.fingerprinted(request.payload() != null)
			.leaseTtl(request.leaseTtl())
			.retention(request.retention())
			.onInProgress(request.onInProgress())
			.recordFailureFor(request.recordFailureFor())
			.build();
	}

	/**
	 * Whether two requests have the same {@link #definition} (for one result type),
	 * compared field by field: a batch compares each of its requests with its first.
	 */
	private static boolean sameOperation(IdempotentRequest first, IdempotentRequest request) {
		return first.workflow().equals(request.workflow()) && (first.payload() != null) == (request.payload() != null)
				&& Objects.equals(first.leaseTtl(), request.leaseTtl())
				&& Objects.equals(first.retention(), request.retention())
				&& first.onInProgress() == request.onInProgress()
				&& first.recordFailureFor().equals(request.recordFailureFor());
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T execute(IdempotentRequest request, Type resultType, Supplier<T> action) {
		OperationDefinition definition = definition(request, resultType);
		IdempotentOperation operation = this.operations.computeIfAbsent(definition, this.engine::prepare);
		try {
			return (T) this.engine.execute(operation, request.key(), request.payload(), action::get);
		}
		catch (Throwable ex) {
			throw rethrow(ex);
		}
	}

	/**
	 * Throws what the action threw unchanged: a {@code Supplier} or {@code Function} cannot
	 * declare a checked exception, but one may sneak through, and the caller is to see it as
	 * it is, not wrapped.
	 */
	@SuppressWarnings("unchecked")
	private static <E extends Throwable> RuntimeException rethrow(Throwable ex) throws E {
		throw (E) ex;
	}

	/**
	 * The action threw for the request at {@link #index} of those it ran: the engine
	 * finishes the batch around it and the template rethrows the request's own exception.
	 */
	private static final class ItemFailure extends RuntimeException {

		static final BatchFailures FAILURES = new BatchFailures() {

			@Override
			public int failedIndex(Throwable failure, List<?> received) {
				return (failure instanceof ItemFailure item) ? item.index : -1;
			}

			@Override
			public Throwable cause(Throwable failure) {
				return (failure instanceof ItemFailure) ? Objects.requireNonNull(failure.getCause()) : failure;
			}

			@Override
			public Throwable translate(Throwable failure, int originalIndex, List<?> original) {
				return cause(failure);
			}

		};

		private final int index;

		ItemFailure(int index, Throwable cause) {
			super(null, cause, true, false);
			this.index = index;
		}

	}

}
