/**
 * The auto-configuration: the properties, the store chosen or detected, schema
 * initialization, the web, broker and Actuator glue, and the start-up checks.
 */
package io.github.idempotency.autoconfigure;
