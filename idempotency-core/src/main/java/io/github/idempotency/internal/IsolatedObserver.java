package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Calls an application's {@link IdempotencyObserver} so that it can never change the
 * protocol's outcome: whatever it throws is logged (a WARN the first time, then at DEBUG)
 * and dropped. A claim it saw is still run, completed, failed or released.
 */
final class IsolatedObserver implements IdempotencyObserver {

	private static final Log logger = LogFactory.getLog(IsolatedObserver.class);

	private final IdempotencyObserver delegate;

	private final AtomicBoolean warned = new AtomicBoolean();

	private IsolatedObserver(IdempotencyObserver delegate) {
		this.delegate = delegate;
	}

	static IdempotencyObserver of(IdempotencyObserver observer) {
		return (observer == NONE || observer instanceof IsolatedObserver) ? observer : new IsolatedObserver(observer);
	}

	@Override
	public void onRequest(String workflow, Outcome outcome) {
		try {
			this.delegate.onRequest(workflow, outcome);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	@Override
	public void onConflict(String workflow) {
		try {
			this.delegate.onConflict(workflow);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	@Override
	public void onTakeover(String workflow) {
		try {
			this.delegate.onTakeover(workflow);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	@Override
	public void onLeaseLost(String workflow) {
		try {
			this.delegate.onLeaseLost(workflow);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	@Override
	public void onStoreCall(StoreOperation operation, long nanos, boolean success) {
		try {
			this.delegate.onStoreCall(operation, nanos, success);
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	private void failed(RuntimeException ex) {
		if (this.warned.compareAndSet(false, true)) {
			logger.warn("The idempotency observer " + this.delegate.getClass().getName()
					+ " threw; its failures are ignored (the next ones are logged at DEBUG)", ex);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("The idempotency observer " + this.delegate.getClass().getName() + " threw", ex);
		}
	}

}
