/**
 * The auto-configuration: the properties, the store chosen or detected, schema
 * initialization, the web, broker and Actuator glue, and the start-up checks.
 */
@NullMarked
package io.github.idempotency.autoconfigure;

import org.jspecify.annotations.NullMarked;
