/**
 * The {@code redis} store: one Redis string per record, claimed with {@code SET NX GET}
 * and finished by Lua scripts (standalone, Sentinel or Cluster). The store speaks the SPI
 * and delegates: the claims ({@code SingleClaim}, {@code BatchClaim}), the record's
 * layout ({@code CompactRecord}), the scripts ({@code RedisScripts}) and what is kept
 * for older records, servers and clients ({@code LegacyFallbacks}) are classes of their
 * own in this package. {@code ReactiveRedisIdempotencyStore} is the same store through
 * Lettuce's reactive API; what both share without talking to Redis is
 * {@code ClaimState}, {@code ClaimAnswer} and {@code BatchSteps}.
 */
@NullMarked
package io.github.idempotency.store.redis;

import org.jspecify.annotations.NullMarked;
