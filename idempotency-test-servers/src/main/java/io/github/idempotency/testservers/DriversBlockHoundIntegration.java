package io.github.idempotency.testservers;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * What BlockHound lets the R2DBC drivers do on a non-blocking thread, wherever a test
 * installs it (a {@code ServiceLoader} integration), none of it a wait of the
 * store's (every other blocking call stays refused):
 * <ul>
 * <li>load a class the first time it is used (a read of a jar), as a driver does while it
 * opens its first connection, and r2dbc-mariadb's look-up of its authentication plugins
 * (a {@code ServiceLoader}) while it opens each;</li>
 * <li>r2dbc-mariadb's client guards each connection's queue of exchanges with a
 * {@code ReentrantLock} held for a few instructions (no I/O under it), which parks for as
 * long when a response is being decoded on the event loop while the next command is
 * sent;</li>
 * <li>Spring Data Redis's {@code LettuceConnectionFactory} creates its shared reactive
 * connection under a lock on first use: a request racing the first one waits there once
 * (seen in CI on {@code RedisReactiveWebIdempotencyTest}'s racing duplicates).</li>
 * </ul>
 */
public class DriversBlockHoundIntegration implements BlockHoundIntegration {

	private static final String MARIADB_CLIENT = "org.mariadb.r2dbc.client.SimpleClient";

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.allowBlockingCallsInside(ClassLoader.class.getName(), "loadClass");
		builder.allowBlockingCallsInside("org.mariadb.r2dbc.authentication.AuthenticationFlowPluginLoader", "get");
		for (String method : new String[] { "executeWhenNotInTransaction", "executeWhenTransaction", "setAutoCommit",
				"sendCommandWithoutResult", "lambda$receive$15", "lambda$sendCommand$17", "lambda$sendCommand$20" }) {
			builder.allowBlockingCallsInside(MARIADB_CLIENT, method);
		}
		builder.allowBlockingCallsInside("org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
				"getOrCreateSharedReactiveConnection");
	}

}
