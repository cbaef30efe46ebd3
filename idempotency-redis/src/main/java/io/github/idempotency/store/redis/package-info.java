/**
 * The {@code redis} store: one Redis string per record, claimed and finished by Lua
 * scripts (standalone, Sentinel or Cluster).
 */
@NullMarked
package io.github.idempotency.store.redis;

import org.jspecify.annotations.NullMarked;
