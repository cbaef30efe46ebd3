package io.github.idempotency.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Where the store is, for the health details: the jdbc URL of the {@code DataSource}
 * without credentials, and Redis's {@code host:port} (the masters' nodes of a cluster, the
 * master's name and the sentinels of Sentinel). Read from the beans' configuration, never
 * from a connection, so that a store that is down is named too.
 */
final class StoreLocation {

	private static final boolean REDIS = ClassUtils.isPresent(
			"org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
			StoreLocation.class.getClassLoader());

	/** {@code user:password@} in a URL, and {@code user=}/{@code password=} parameters. */
	private static final Pattern USER_INFO = Pattern.compile("(//)[^/@?;]*@");

	private static final Pattern CREDENTIALS = Pattern.compile("([?&;:])(user|username|password)=[^&;]*",
			Pattern.CASE_INSENSITIVE);

	private StoreLocation() {
	}

	/**
	 * The location details of a store of {@code backend}.
	 * @param backend the store's backend
	 * @param beans where its {@code DataSource} and Redis connection factory are
	 * @return {@code address} (and, for hybrid, {@code cache}), or nothing when unknown
	 */
	static Map<String, String> of(String backend, ListableBeanFactory beans) {
		Map<String, String> location = new LinkedHashMap<>();
		String jdbc = jdbcUrl(beans);
		String redis = redis(beans);
		switch (backend) {
			case "jdbc" -> put(location, "address", jdbc);
			case "redis" -> put(location, "address", redis);
			case "hybrid" -> {
				put(location, "address", jdbc);
				put(location, "cache", redis);
			}
			default -> {
			}
		}
		return location;
	}

	private static void put(Map<String, String> location, String name, @Nullable String value) {
		if (value != null) {
			location.put(name, value);
		}
	}

	private static @Nullable String jdbcUrl(ListableBeanFactory beans) {
		DataSource dataSource = beans.getBeanProvider(DataSource.class).getIfUnique();
		if (dataSource == null) {
			return null;
		}
		BeanWrapperImpl wrapper = new BeanWrapperImpl(dataSource);
		for (String property : new String[] { "jdbcUrl", "url", "URL" }) {
			if (wrapper.isReadableProperty(property) && wrapper.getPropertyValue(property) instanceof String url) {
				return withoutCredentials(url);
			}
		}
		return null;
	}

	/**
	 * A jdbc URL without the user and password it may carry.
	 * @param url the URL
	 * @return the URL without them
	 */
	static String withoutCredentials(String url) {
		String stripped = USER_INFO.matcher(url).replaceFirst("$1");
		return CREDENTIALS.matcher(stripped).replaceAll("$1").replace("?&", "?").replace(";;", ";").replaceAll("[?&;]$",
				"");
	}

	private static @Nullable String redis(ListableBeanFactory beans) {
		if (!REDIS) {
			return null;
		}
		return Redis.address(beans);
	}

	private static final class Redis {

		static @Nullable String address(ListableBeanFactory beans) {
			RedisConnectionFactory factory = beans.getBeanProvider(RedisConnectionFactory.class).getIfUnique();
			if (!(factory instanceof LettuceConnectionFactory lettuce)) {
				return null;
			}
			if (lettuce.getClusterConfiguration() != null) {
				return "cluster " + lettuce.getClusterConfiguration()
					.getClusterNodes()
					.stream()
					.map(Redis::node)
					.collect(Collectors.joining(","));
			}
			if (lettuce.getSentinelConfiguration() != null) {
				var sentinel = lettuce.getSentinelConfiguration();
				return "sentinel master " + ((sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?")
						+ " via " + sentinel.getSentinels().stream().map(Redis::node).collect(Collectors.joining(","));
			}
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}

		private static String node(RedisNode node) {
			return node.getHost() + ":" + node.getPort();
		}

	}

}
