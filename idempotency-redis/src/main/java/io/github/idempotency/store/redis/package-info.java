/**
 * The {@code redis} store: one Redis string per record, claimed and finished by Lua
 * scripts (standalone, Sentinel or Cluster).
 */
package io.github.idempotency.store.redis;
