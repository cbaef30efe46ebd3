package io.github.idempotency.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Warns at start of every {@code idempotency.*} property that no idempotency property
 * binds (a typo such as {@code idempotency.backnd}), naming the closest known one by edit
 * distance. Known are the {@code idempotency.*} properties of the configuration metadata
 * on the class path ({@code META-INF/spring-configuration-metadata.json}), in every form
 * Spring Boot binds them from (kebab-case, camelCase, underscores, an environment variable
 * such as {@code IDEMPOTENCY_LEASETTL} or {@code IDEMPOTENCY_LEASE_TTL}); the indexes of a
 * list and the keys of a map belong to their property. Runs before any bean is created,
 * so the warning comes before a failure the typo may cause.
 */
final class UnknownPropertiesWarning implements BeanFactoryPostProcessor {

	private static final Log logger = LogFactory.getLog(UnknownPropertiesWarning.class);

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("idempotency");

	/** The test servers' addresses ({@code IDEMPOTENCY_TEST_*_URL}, see CONTRIBUTING.md), not properties. */
	private static final ConfigurationPropertyName TEST_SERVERS = ConfigurationPropertyName.of("idempotency.test");

	private final Environment environment;

	private final @Nullable ClassLoader classLoader;

	UnknownPropertiesWarning(Environment environment, @Nullable ClassLoader classLoader) {
		this.environment = environment;
		this.classLoader = classLoader;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		List<Known> known = known(this.classLoader);
		if (known.isEmpty()) {
			logger.debug("No idempotency properties in " + METADATA + ": unknown properties are not reported");
			return;
		}
		warnings(this.environment, known).forEach(logger::warn);
	}

	/**
	 * A warning for each {@code idempotency.*} name of the environment that no known
	 * property binds, once per name.
	 */
	static List<String> warnings(Environment environment, List<Known> known) {
		Map<ConfigurationPropertyName, ConfigurationProperty> unknown = new LinkedHashMap<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			boolean variables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
			iterable.filter(PREFIX::isAncestorOf).forEach((name) -> {
				if (variables && (TEST_SERVERS.equals(name) || TEST_SERVERS.isAncestorOf(name))) {
					return;
				}
				if (known.stream().noneMatch((property) -> property.binds(name, variables))
						&& !unknown.containsKey(name)) {
					ConfigurationProperty property = source.getConfigurationProperty(name);
					if (property != null) {
						unknown.put(name, property);
					}
				}
			});
		}
		List<String> warnings = new ArrayList<>();
		unknown.forEach((name, property) -> warnings.add("Unknown property '" + name + "'"
				+ ((property.getOrigin() != null) ? " (" + property.getOrigin() + ")" : "")
				+ " is ignored: no idempotency property has that name; did you mean '" + closest(name, known) + "'?"));
		return warnings;
	}

	private static String closest(ConfigurationPropertyName name, List<Known> known) {
		String written = comparable(name.toString());
		return known.stream()
			.map((property) -> property.name().toString())
			.min(Comparator.comparingInt((String candidate) -> distance(written, comparable(candidate))))
			.orElseThrow();
	}

	/**
	 * A name as it compares for a typo: lower case, without the dashes and underscores that
	 * relaxed binding ignores.
	 */
	private static String comparable(String name) {
		return name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
	}

	/**
	 * The Levenshtein distance: how many characters to insert, delete or replace to turn
	 * one text into the other.
	 */
	static int distance(String from, String to) {
		int[] previous = new int[to.length() + 1];
		int[] current = new int[to.length() + 1];
		for (int j = 0; j <= to.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= from.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= to.length(); j++) {
				int replace = previous[j - 1] + ((from.charAt(i - 1) == to.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[to.length()];
	}

	/**
	 * The {@code idempotency.*} properties of every configuration metadata file on the
	 * class path.
	 */
	static List<Known> known(@Nullable ClassLoader classLoader) {
		List<Known> known = new ArrayList<>();
		JsonMapper json = JsonMapper.builder().build();
		try {
			ClassLoader loader = (classLoader != null) ? classLoader : UnknownPropertiesWarning.class.getClassLoader();
			for (URL url : Collections.list(loader.getResources(METADATA))) {
				try (InputStream in = url.openStream()) {
					for (JsonNode property : json.readTree(in).path("properties")) {
						String name = property.path("name").asString();
						if (ConfigurationPropertyName.isValid(name)
								&& PREFIX.isAncestorOf(ConfigurationPropertyName.of(name))) {
							known.add(new Known(ConfigurationPropertyName.of(name),
									isContainer(property.path("type").asString())));
						}
					}
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.debug("Could not read " + METADATA + ": unknown properties are not reported", ex);
			return List.of();
		}
		return known;
	}

	private static boolean isContainer(String type) {
		return type.startsWith("java.util.List") || type.startsWith("java.util.Set")
				|| type.startsWith("java.util.Collection") || type.startsWith("java.util.Map") || type.endsWith("[]");
	}

	/**
	 * A known property.
	 *
	 * @param name its name
	 * @param container whether it is a list, set, array or map, whose elements are named
	 * below it ({@code stored-headers[0]}, a map's keys)
	 */
	record Known(ConfigurationPropertyName name, boolean container) {

		/**
		 * Whether {@code written} binds to this property: the same name in a relaxed form
		 * ({@link ConfigurationPropertyName#equals}), an element of it, or, for an
		 * environment variable, also the legacy form with each dash an underscore.
		 */
		boolean binds(ConfigurationPropertyName written, boolean variable) {
			if (matches(this.name, written)) {
				return true;
			}
			return variable && this.name.toString().contains("-")
					&& matches(ConfigurationPropertyName.of(this.name.toString().replace('-', '.')), written);
		}

		private boolean matches(ConfigurationPropertyName name, ConfigurationPropertyName written) {
			return name.equals(written) || (this.container && name.isAncestorOf(written));
		}

	}

}
