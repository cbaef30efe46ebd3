package io.github.idempotency.benchmarks;

import org.springframework.messaging.Message;
import org.springframework.messaging.support.MessageBuilder;

/**
 * The messages the Spring Integration selector is given: the key in a header, as a
 * broker delivers it.
 */
final class PeerMessages {

	static final String KEY_HEADER = "idempotency-key";

	private static final String PAYLOAD = "{\"amountCents\":4200}";

	private PeerMessages() {
	}

	static Message<String> of(String key) {
		return MessageBuilder.withPayload(PAYLOAD).setHeader(KEY_HEADER, key).build();
	}

	static String key(Message<?> message) {
		return message.getHeaders().get(KEY_HEADER, String.class);
	}

}
