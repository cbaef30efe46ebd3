/**
 * The RabbitMQ glue: the not-retryable outcomes rejected without requeue, replies, and
 * listeners that acknowledge by hand.
 */
@NullMarked
package io.github.idempotency.amqp;

import org.jspecify.annotations.NullMarked;
