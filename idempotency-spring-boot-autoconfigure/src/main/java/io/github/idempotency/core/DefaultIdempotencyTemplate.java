package io.github.idempotency.core;

import java.lang.reflect.Type;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

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

	@SuppressWarnings("unchecked")
	private <T> @Nullable T execute(IdempotentRequest request, Type resultType, Supplier<T> action) {
		OperationDefinition definition = new OperationDefinition(request.workflow(), resultType,
				request.payload() != null, request.leaseTtl(), request.retention(), request.onInProgress(),
				request.recordFailureFor());
		IdempotentOperation operation = this.operations.computeIfAbsent(definition, this.engine::prepare);
		try {
			return (T) this.engine.execute(operation, request.key(), request.payload(), action::get);
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// a Supplier cannot throw checked exceptions, but one may sneak through
			throw new UndeclaredThrowableException(ex);
		}
	}

}
