package io.github.idempotency.autoconfigure;

import io.github.idempotency.internal.EngineSettings;

/**
 * The engine's settings the auto-configuration makes of the properties, for a test's own
 * engine in another package.
 */
public final class EngineSettingsOf {

	private EngineSettingsOf() {
	}

	/**
	 * The settings of {@code properties}.
	 * @param properties the bound properties
	 * @return the settings
	 */
	public static EngineSettings of(IdempotencyProperties properties) {
		return properties.toEngineSettings();
	}

}
