package io.github.idempotency.web.reactive;

import java.nio.ByteBuffer;
import java.security.MessageDigest;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.internal.http.HttpFingerprint;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;

/**
 * A request whose body is digested (SHA-256) as the application reads it, without
 * keeping it in memory. When the fingerprint is asked for a body nobody has read yet (a
 * handler method that takes a {@code Mono} of its body reads it only when its result is
 * subscribed, after the claim), the body is read here, kept, and given to the reader
 * later: a body is read from the connection once.
 */
final class DigestedRequest extends ServerHttpRequestDecorator {

	private final MessageDigest digest = HttpFingerprint.sha256();

	private final Object lock = new Object();

	private boolean reading;

	private @Nullable String hex;

	private byte @Nullable [] kept;

	DigestedRequest(ServerHttpRequest delegate) {
		super(delegate);
	}

	@Override
	public Flux<DataBuffer> getBody() {
		return Flux.defer(() -> {
			synchronized (this.lock) {
				if (this.kept != null) {
					byte[] bytes = this.kept;
					return Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(bytes));
				}
				this.reading = true;
			}
			return super.getBody().doOnNext(this::update).doOnComplete(this::finish);
		});
	}

	/**
	 * The digest of the body: of what the application read when it read the body, else of
	 * the whole body, read now and kept for the application.
	 * @return the hexadecimal SHA-256
	 */
	Mono<String> digest() {
		return Mono.defer(() -> {
			synchronized (this.lock) {
				if (this.hex != null) {
					return Mono.just(this.hex);
				}
				if (this.reading) {
					// read in part (a reader that stopped): what was read is what was received
					return Mono.just(finish());
				}
				this.reading = true;
			}
			return DataBufferUtils.join(super.getBody()).map((joined) -> {
				byte[] bytes = new byte[joined.readableByteCount()];
				joined.read(bytes);
				DataBufferUtils.release(joined);
				return bytes;
			}).defaultIfEmpty(new byte[0]).map((bytes) -> {
				synchronized (this.lock) {
					this.kept = bytes;
					this.digest.update(bytes);
					return finish();
				}
			});
		});
	}

	private void update(DataBuffer buffer) {
		synchronized (this.lock) {
			try (DataBuffer.ByteBufferIterator buffers = buffer.readableByteBuffers()) {
				while (buffers.hasNext()) {
					ByteBuffer next = buffers.next();
					this.digest.update(next);
				}
			}
		}
	}

	private String finish() {
		synchronized (this.lock) {
			String hex = this.hex;
			if (hex == null) {
				hex = HttpFingerprint.hex(this.digest);
				this.hex = hex;
			}
			return hex;
		}
	}

}
