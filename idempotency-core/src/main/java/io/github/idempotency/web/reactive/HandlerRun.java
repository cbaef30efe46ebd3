package io.github.idempotency.web.reactive;

import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

import io.github.idempotency.aop.IdempotentMethodAdapter.Invocation;
import io.github.idempotency.internal.PermanentFailures;
import io.github.idempotency.internal.http.ExchangeRun;
import io.github.idempotency.internal.http.HttpAnswer;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;
import org.springframework.web.server.ServerWebExchange;

/**
 * The run of a WebFlux handler method, when a call claimed its key: it calls the method,
 * writes its answer itself ({@link HandlerAnswers}) onto the response that keeps it
 * ({@link ExchangeResponse}), and settles the claim with that answer ({@link ExchangeRun}),
 * for a {@code Mono} on the scheduler (wherever it completes with a non-blocking store), for a
 * plain result on the calling thread.
 */
final class HandlerRun {

	private final ServerWebExchange exchange;

	private final ExchangeResponse response;

	private final ContextView context;

	private final PermanentFailures permanentFailures;

	private final HandlerAnswers answers;

	/** Where a {@code Mono}'s run is settled on a blocking store; {@code null} on a non-blocking one. */
	private final @Nullable Scheduler scheduler;

	/** The merged {@code @ResponseStatus}, which WebFlux sets once a plain result is returned. */
	private final @Nullable Integer declaredStatus;

	private final ExceptionHandlerMethodResolver ownExceptionHandlers;

	private volatile boolean ran;

	private volatile boolean cancelled;

	private final Sinks.Empty<Void> cancellation = Sinks.empty();

	HandlerRun(ServerWebExchange exchange, ExchangeResponse response, ContextView context,
			PermanentFailures permanentFailures, HandlerAnswers answers, @Nullable Scheduler scheduler,
			@Nullable Integer declaredStatus, ExceptionHandlerMethodResolver ownExceptionHandlers) {
		this.exchange = exchange;
		this.response = response;
		this.context = context;
		this.permanentFailures = permanentFailures;
		this.answers = answers;
		this.scheduler = scheduler;
		this.declaredStatus = declaredStatus;
		this.ownExceptionHandlers = ownExceptionHandlers;
	}

	/** Whether this call claimed the key and ran the method. */
	boolean ran() {
		return this.ran;
	}

	/**
	 * A {@code Mono}'s run: its value or failure written, then the run settled with it;
	 * unless it is cancelled ({@link #cancel}) first.
	 */
	CompletableFuture<HttpAnswer> run(Invocation invocation) {
		ExchangeRun run = this.response.capture(this.permanentFailures);
		this.ran = true;
		if (this.cancelled) {
			// the method's transaction rolled back, or is rolling back: nothing is called in it
			this.response.passThrough();
			run.stopped(cancellation());
			return run.answer();
		}
		Mono<?> handler;
		try {
			Object returned = invocation.proceed();
			handler = (returned != null) ? (Mono<?>) returned
					: Mono.error(new IllegalStateException("the handler method returned null, not a Mono"));
		}
		catch (Throwable ex) {
			handler = Mono.error(ex);
		}
		Mono<Void> written = handler.map(Optional::<Object>of)
			.defaultIfEmpty(Optional.empty())
			// the method's failure, not the writing's
			.onErrorResume((ex) -> failed(run, ex).then(Mono.empty()))
			.flatMap((value) -> this.answers.value(this.exchange, Mono.justOrEmpty(value.orElse(null))))
			// the handler's result sees the request's context (the exchange, the security context,
			// the method's transaction)
			.contextWrite(this.context)
			.then();
		// a cancellation wins over the run, and stops it where it is: subscribed first, so that a run
		// cancelled already is never subscribed
		Mono<Void> stoppable = Mono.firstWithSignal(
				this.cancellation.asMono().then(Mono.error(HandlerRun::cancellation)), written);
		// the engine settles where the answer is written: a blocking store on the scheduler, never
		// on an event loop; a non-blocking one wherever the answer is written
		(this.scheduler != null ? stoppable.publishOn(this.scheduler) : stoppable).subscribe(null, (ex) -> {
			if (ex instanceof CancellationException) {
				this.response.passThrough();
				run.stopped(ex);
			}
			else {
				answered(run, ex);
			}
		}, () -> run.answered(this.response.captured()));
		return run.answer();
	}

	/**
	 * The client went away while the run was part of the handler method's transaction,
	 * which rolls back: the run stops where it is (or is never called), so that nothing of
	 * it runs once the transaction ended, outside it, and the key is given back.
	 */
	void cancel() {
		this.cancelled = true;
		this.cancellation.tryEmitEmpty();
	}

	private static CancellationException cancellation() {
		return new CancellationException("The client went away during the handler method's transaction, which "
				+ "rolled back: the run was stopped and its key given back");
	}

	/** A plain result's run, on the calling thread. */
	CompletableFuture<HttpAnswer> runBlocking(Invocation invocation) {
		ExchangeRun run = this.response.capture(this.permanentFailures);
		this.ran = true;
		Mono<Void> written;
		try {
			Object value = invocation.proceed();
			if (this.declaredStatus != null) {
				// WebFlux sets it once the method returned: the answer is written before
				this.exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(this.declaredStatus));
			}
			written = this.answers.value(this.exchange, value);
		}
		catch (Throwable ex) {
			written = failed(run, ex);
		}
		try {
			written.contextWrite(this.context).block();
			run.answered(this.response.captured());
		}
		catch (RuntimeException ex) {
			answered(run, ex);
		}
		return run.answer();
	}

	/** The method failed: a permanent failure's answer is written; any other is the application's to answer. */
	private Mono<Void> failed(ExchangeRun run, Throwable failure) {
		run.threw(failure);
		if (run.isPermanent(failure)) {
			return this.answers.failure(this.exchange, failure, this.ownExceptionHandlers);
		}
		this.response.passThrough();
		return Mono.empty();
	}

	/**
	 * Writing the answer of a method that returned failed: the operation ran, so the
	 * run is settled with the server error its client gets.
	 */
	private void answered(ExchangeRun run, Throwable failure) {
		this.response.failed();
		run.answered(this.response.captured());
	}

}
