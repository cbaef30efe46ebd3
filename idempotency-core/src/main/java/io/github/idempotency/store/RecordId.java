package io.github.idempotency.store;

import org.springframework.util.Assert;

/**
 * The identity of one record: a workflow and a key. The two parts are kept apart: a store
 * must never join them in a way where two different pairs meet.
 *
 * @param workflow the scope of the key
 * @param key the idempotency key
 */
public record RecordId(String workflow, String key) {

	public RecordId {
		Assert.hasText(workflow, "'workflow' must not be blank");
		Assert.hasText(key, "'key' must not be blank");
	}

	/**
	 * Both parts, quoted: {@code workflow 'payment' key 'p-1'}. Inside the quotes a quote
	 * reads {@code \'}, a backslash {@code \\}, a control character {@code \n},
	 * {@code \r}, {@code \t} or {@code \}{@code u} and four hex digits, as does an unpaired
	 * surrogate: two different records never read the same and a key cannot forge a log
	 * line.
	 * @return the text for logs and exception messages
	 */
	@Override
	public String toString() {
		StringBuilder text = new StringBuilder(this.workflow.length() + this.key.length() + 20);
		quote(text.append("workflow "), this.workflow);
		quote(text.append(" key "), this.key);
		return text.toString();
	}

	private static void quote(StringBuilder text, String value) {
		text.append('\'');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '\'', '\\' -> text.append('\\').append(c);
				case '\n' -> text.append("\\n");
				case '\r' -> text.append("\\r");
				case '\t' -> text.append("\\t");
				default -> {
					if (Character.isHighSurrogate(c) && i + 1 < value.length()
							&& Character.isLowSurrogate(value.charAt(i + 1))) {
						text.append(c).append(value.charAt(++i));
					}
					else if (Character.isISOControl(c) || Character.isSurrogate(c) || c == '\u2028'
							|| c == '\u2029') {
						text.append(String.format("\\u%04x", (int) c));
					}
					else {
						text.append(c);
					}
				}
			}
		}
		text.append('\'');
	}

}
