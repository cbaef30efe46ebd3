package io.github.idempotency.web.reactive;

import java.io.ByteArrayOutputStream;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.internal.PermanentFailures;
import io.github.idempotency.internal.http.ExchangeRun;
import io.github.idempotency.internal.http.HttpAnswer;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * The response of a request that went through {@link IdempotencyExchangeFilter}: passed
 * through as it is, until an {@code @Idempotent} handler method's run is claimed; from then
 * on what is written is kept (the status and headers on the response, not yet sent; the
 * body here) until the run is settled with it, and then sent. Once an answer is sent,
 * whatever WebFlux writes after it is dropped.
 */
final class ExchangeResponse extends ServerHttpResponseDecorator {

	private static final String ATTRIBUTE = ExchangeResponse.class.getName();

	private enum Mode {

		/** Not an idempotent run's: written as it comes. */
		PASS,

		/** A claimed run's: kept until the run is settled. */
		CAPTURE,

		/** Answered: what comes after is dropped. */
		DONE

	}

	private final List<String> storedHeaders;

	private final ByteArrayOutputStream body = new ByteArrayOutputStream();

	private volatile Mode mode = Mode.PASS;

	private @Nullable HttpHeaders dropped;

	/** The status and headers when the run was claimed. */
	private volatile @Nullable Before before;

	ExchangeResponse(ServerHttpResponse delegate, List<String> storedHeaders) {
		super(delegate);
		this.storedHeaders = storedHeaders;
	}

	/**
	 * Binds the response to its exchange, whose attributes every later form of the
	 * exchange shares.
	 */
	void bindTo(ServerWebExchange exchange) {
		exchange.getAttributes().put(ATTRIBUTE, this);
	}

	/**
	 * The response of an exchange that went through the filter.
	 * @param exchange the exchange, in any of its forms
	 * @return the response, or {@code null}
	 */
	static @Nullable ExchangeResponse of(ServerWebExchange exchange) {
		return (exchange.getAttribute(ATTRIBUTE) instanceof ExchangeResponse response) ? response : null;
	}

	/**
	 * Keeps what is written from now on, for the run of a claimed handler method.
	 * @param permanentFailures the method's {@code recordFailureFor} types
	 * @return the run, to settle with {@link #captured()}
	 */
	ExchangeRun capture(PermanentFailures permanentFailures) {
		if (this.mode != Mode.PASS) {
			throw new IllegalStateException("A request runs one @Idempotent handler method");
		}
		this.before = new Before(getDelegate().getStatusCode(), HttpHeaders.copyOf(getDelegate().getHeaders()));
		this.mode = Mode.CAPTURE;
		return new ExchangeRun(permanentFailures);
	}

	/** What was written while the run was kept. */
	HttpAnswer captured() {
		HttpStatusCode status = getDelegate().getStatusCode();
		byte[] bytes;
		synchronized (this.body) {
			bytes = this.body.toByteArray();
		}
		return HttpAnswer.of((status != null) ? status.value() : 200, getDelegate().getHeaders().asMultiValueMap(),
				this.storedHeaders, bytes);
	}

	/**
	 * Drops what the run wrote (its body, and the status and headers it set) and passes
	 * what comes next through: the run's failure, or its transaction's, is answered by the
	 * application's exception handling, as if nothing was kept.
	 */
	void passThrough() {
		synchronized (this.body) {
			this.body.reset();
		}
		Before before = this.before;
		if (this.mode == Mode.CAPTURE && before != null) {
			ServerHttpResponse response = getDelegate();
			response.setStatusCode(before.status());
			response.getHeaders().clear();
			response.getHeaders().putAll(before.headers());
		}
		this.mode = Mode.PASS;
	}

	/** Writing the run's answer failed: what it wrote is dropped, and it is a server error. */
	void failed() {
		synchronized (this.body) {
			this.body.reset();
		}
		getDelegate().setStatusCode(HttpStatusCode.valueOf(500));
	}

	/** Whether an answer was sent: what WebFlux writes from now on is dropped. */
	boolean isAnswered() {
		return this.mode == Mode.DONE;
	}

	/**
	 * Sends what the run wrote, its status and headers as set.
	 * @return when it is written
	 */
	Mono<Void> send() {
		byte[] bytes;
		synchronized (this.body) {
			bytes = this.body.toByteArray();
		}
		return write(bytes);
	}

	/**
	 * Sends a stored answer, marked as replayed.
	 * @param answer the stored answer
	 * @param replayedHeader the header that marks a replay
	 * @return when it is written
	 */
	Mono<Void> replay(HttpAnswer answer, String replayedHeader) {
		ServerHttpResponse response = getDelegate();
		response.setStatusCode(HttpStatusCode.valueOf(answer.status()));
		answer.headers().forEach((name, values) -> response.getHeaders().put(name, values));
		response.getHeaders().set(replayedHeader, "true");
		return write(answer.body());
	}

	private Mono<Void> write(byte[] bytes) {
		ServerHttpResponse response = getDelegate();
		this.mode = Mode.DONE;
		response.getHeaders().remove(HttpHeaders.TRANSFER_ENCODING);
		response.getHeaders().setContentLength(bytes.length);
		return (bytes.length > 0) ? response.writeWith(Mono.just(response.bufferFactory().wrap(bytes)))
				: response.setComplete();
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		return switch (this.mode) {
			case PASS -> super.writeWith(body);
			case CAPTURE -> Flux.from(body).doOnNext(this::keep).then();
			case DONE -> Flux.from(body).doOnNext(DataBufferUtils::release).then();
		};
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return (this.mode == Mode.PASS) ? super.writeAndFlushWith(body) : writeWith(Flux.from(body).concatMap(Flux::from));
	}

	@Override
	public Mono<Void> setComplete() {
		return (this.mode == Mode.PASS) ? super.setComplete() : Mono.empty();
	}

	@Override
	public HttpHeaders getHeaders() {
		if (this.mode != Mode.DONE) {
			return super.getHeaders();
		}
		// the answer is sent: what WebFlux sets after it goes nowhere
		if (this.dropped == null) {
			this.dropped = new HttpHeaders();
		}
		return this.dropped;
	}

	@Override
	public boolean setStatusCode(@Nullable HttpStatusCode status) {
		return (this.mode != Mode.DONE) && super.setStatusCode(status);
	}

	@Override
	public boolean isCommitted() {
		return (this.mode == Mode.CAPTURE) ? false : super.isCommitted();
	}

	private void keep(DataBuffer buffer) {
		byte[] bytes = new byte[buffer.readableByteCount()];
		buffer.read(bytes);
		DataBufferUtils.release(buffer);
		synchronized (this.body) {
			this.body.writeBytes(bytes);
		}
	}

	private record Before(@Nullable HttpStatusCode status, HttpHeaders headers) {
	}

}
