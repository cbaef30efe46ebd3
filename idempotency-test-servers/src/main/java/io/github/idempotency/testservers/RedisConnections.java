package io.github.idempotency.testservers;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Lettuce connection factories for the Redis servers of the tests, with short command
 * timeouts and quick reconnects, so an outage shows at once and its end soon after.
 */
public final class RedisConnections {

	private static final Duration TIMEOUT = Duration.ofSeconds(2);

	/** Shared by every factory of the test JVM (a factory does not shut down given resources). */
	private static final ClientResources RESOURCES = ClientResources.builder()
		.reconnectDelay(Delay.constant(Duration.ofMillis(100)))
		.build();

	private RedisConnections() {
	}

	/**
	 * A started factory for the single node at {@code url}.
	 * @param url {@code redis://host:port}
	 * @return the factory; {@code destroy()} it after use
	 */
	public static LettuceConnectionFactory standalone(String url) {
		URI uri = URI.create(url);
		return start(new LettuceConnectionFactory(new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()),
				client(ClientOptions.builder()
					.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
					.build())));
	}

	/**
	 * A started factory for the Redis Cluster of {@code nodes}.
	 * @param nodes {@code host:port} of the masters, comma-separated
	 * @return the factory; {@code destroy()} it after use
	 */
	public static LettuceConnectionFactory cluster(String nodes) {
		RedisClusterConfiguration configuration = new RedisClusterConfiguration(Arrays.asList(nodes.split(",")));
		return start(new LettuceConnectionFactory(configuration, client(ClusterClientOptions.builder().build())));
	}

	private static LettuceClientConfiguration client(ClientOptions options) {
		return LettuceClientConfiguration.builder()
			.commandTimeout(TIMEOUT)
			.clientOptions(options)
			.clientResources(RESOURCES)
			.build();
	}

	private static LettuceConnectionFactory start(LettuceConnectionFactory factory) {
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
