/**
 * The {@code idempotency} Actuator endpoint (the settings, one record, a manual release)
 * and the store's health indicator.
 */
@NullMarked
package io.github.idempotency.actuate;

import org.jspecify.annotations.NullMarked;
