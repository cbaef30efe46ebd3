/**
 * The RabbitMQ glue: the not-retryable outcomes rejected without requeue, replies, and
 * listeners that acknowledge by hand.
 */
package io.github.idempotency.amqp;
