package io.github.idempotency.autoconfigure.aop;


import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What ahead-of-time processing learns from the starter's modules: the scripts the stores
 * load by name. (The result types of {@code @Idempotent} methods are core's:
 * {@code IdempotentResultTypesAotProcessorTest}.)
 */
class AheadOfTimeHintsTest {

	@Test
	void theScriptsTheStoresLoadByNameAreResources() {
		RuntimeHints hints = new RuntimeHints();
		AotServices.factories().load(RuntimeHintsRegistrar.class).forEach((registrar) ->
				registrar.registerHints(hints, getClass().getClassLoader()));
		for (String script : new String[] { "io/github/idempotency/store/redis/claim.lua",
				"io/github/idempotency/store/hybrid/put.lua", "io/github/idempotency/store/jdbc/schema-postgresql.sql",
				"io/github/idempotency/store/jdbc/schema-mysql.sql" }) {
			assertThat(RuntimeHintsPredicates.resource().forResource(script)).accepts(hints);
		}
	}

}
