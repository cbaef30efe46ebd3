package io.github.idempotency.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.internal.BatchItem;
import io.github.idempotency.internal.RedeliveryRequested;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;

/**
 * A call of a batch method ({@code @Idempotent(batch = ...)}): evaluates the key and
 * payload of each element (bound as {@code #item}, its position as {@code #index}) and
 * has the engine call the method once with the elements it must run.
 */
final class BatchInvocation {

	/** The variable an element of the batch is bound to. */
	static final String ITEM = "item";

	/** The variable the element's position in the batch is bound to. */
	static final String INDEX = "index";

	private BatchInvocation() {
	}

	static @Nullable Object invoke(IdempotentMethodResolver resolver, IdempotentMethod method,
			MethodInvocation invocation) throws Throwable {
		@Nullable Object[] arguments = invocation.getArguments();
		List<?> batch = (List<?>) arguments[method.batchParameter()];
		if (batch == null || batch.isEmpty()) {
			return invocation.proceed();
		}
		if (!(invocation instanceof ProxyMethodInvocation proxyInvocation)) {
			throw new IllegalStateException("@Idempotent(batch = ...) needs a Spring AOP proxy to call "
					+ method.method() + " with the elements it must run");
		}
		IdempotentMethodAdapter.Adaptation adaptation = method.adaptation();
		if (adaptation == null) {
			run(resolver, method, proxyInvocation, batch, (positions, runArguments) -> runArguments);
			return null;
		}
		adaptation.invokeBatch(new IdempotentMethodAdapter.BatchCall() {

			@Override
			public List<?> batch() {
				return batch;
			}

			@Override
			public @Nullable Object[] arguments() {
				return arguments;
			}

			@Override
			public void execute(IdempotentMethodAdapter.BatchArguments runArguments) throws Throwable {
				run(resolver, method, proxyInvocation, batch, runArguments);
			}

		});
		return null;
	}

	private static void run(IdempotentMethodResolver resolver, IdempotentMethod method,
			ProxyMethodInvocation invocation, List<?> batch, IdempotentMethodAdapter.BatchArguments runArguments)
			throws Throwable {
		@Nullable Object[] arguments = invocation.getArguments().clone();
		EvaluationContext context = resolver.evaluationContext(method, arguments);
		List<BatchItem> items = new ArrayList<>(batch.size());
		for (int i = 0; i < batch.size(); i++) {
			Object element = batch.get(i);
			context.setVariable(ITEM, element);
			context.setVariable(INDEX, i);
			items.add(item(method, element, context));
		}
		resolver.engine().executeAll(method.operation(), items, resolver.batchFailures(), (positions, results) -> {
			List<Object> run = new ArrayList<>(positions.length);
			for (int position : positions) {
				run.add(batch.get(position));
			}
			@Nullable Object[] callArguments = arguments.clone();
			callArguments[method.batchParameter()] = run;
			invocation.setArguments(runArguments.apply(positions.clone(), callArguments));
			invocation.proceed();
			int redelivered = runArguments.redeliveredFrom();
			if (redelivered >= 0) {
				throw new RedeliveryRequested(redelivered, null);
			}
		});
	}

	/**
	 * The key and payload of one element. An expression that fails on it (a property of a
	 * {@code null}) rejects that element alone, as a single call's invalid key is.
	 */
	private static BatchItem item(IdempotentMethod method, @Nullable Object element, EvaluationContext context) {
		// a batch method has a key expression: only the adapters of single calls give their own
		Expression expression = Objects.requireNonNull(method.key(), "the key expression of a batch method");
		try {
			Object key = expression.getValue(context);
			Expression payloadExpression = method.payload();
			Object payload = null;
			if (payloadExpression != null) {
				expression = payloadExpression;
				payload = payloadExpression.getValue(context);
			}
			return new BatchItem(element, key, payload);
		}
		catch (EvaluationException ex) {
			return BatchItem.invalid(element, new InvalidIdempotencyKeyException("The idempotency key of '"
					+ method.operation().workflow() + "' cannot be resolved: '" + expression.getExpressionString()
					+ "' cannot be evaluated on an element of the batch of " + method.method().getName() + " ("
					+ ex.getMessage() + "); the element was not run", ex));
		}
	}

}
