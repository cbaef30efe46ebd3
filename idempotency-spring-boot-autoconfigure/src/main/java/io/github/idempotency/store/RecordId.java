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

	@Override
	public String toString() {
		return this.workflow + "/" + this.key;
	}

}
