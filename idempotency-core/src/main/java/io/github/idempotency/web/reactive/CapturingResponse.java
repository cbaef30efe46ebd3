package io.github.idempotency.web.reactive;

import java.io.ByteArrayOutputStream;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.AbstractServerHttpResponse;

/**
 * A response the application's exception handling writes to instead of the real one, so
 * that what it answers to a permanent failure can be stored and then written once: the
 * status, the headers and the body. Nothing reaches the real response.
 */
final class CapturingResponse extends AbstractServerHttpResponse {

	private final ByteArrayOutputStream body = new ByteArrayOutputStream();

	CapturingResponse() {
		super(DefaultDataBufferFactory.sharedInstance);
	}

	/** What was written, once the writing completed. */
	CapturedAnswer answer() {
		HttpHeaders headers = new HttpHeaders();
		headers.putAll(getHeaders());
		// the real response frames the body itself
		headers.remove(HttpHeaders.CONTENT_LENGTH);
		headers.remove(HttpHeaders.TRANSFER_ENCODING);
		HttpStatusCode status = getStatusCode();
		byte[] bytes;
		synchronized (this.body) {
			bytes = this.body.toByteArray();
		}
		return new CapturedAnswer((status != null) ? status.value() : 200, headers, bytes);
	}

	@Override
	public <T> T getNativeResponse() {
		throw new IllegalStateException("A captured response has no native response");
	}

	@Override
	protected Mono<Void> writeWithInternal(Publisher<? extends DataBuffer> body) {
		return Flux.from(body).doOnNext(this::keep).then();
	}

	@Override
	protected Mono<Void> writeAndFlushWithInternal(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		return Flux.from(body).concatMap(Flux::from).doOnNext(this::keep).then();
	}

	private void keep(DataBuffer buffer) {
		byte[] bytes = new byte[buffer.readableByteCount()];
		buffer.read(bytes);
		DataBufferUtils.release(buffer);
		synchronized (this.body) {
			this.body.writeBytes(bytes);
		}
	}

	@Override
	protected void applyStatusCode() {
	}

	@Override
	protected void applyHeaders() {
	}

	@Override
	protected void applyCookies() {
	}

}
