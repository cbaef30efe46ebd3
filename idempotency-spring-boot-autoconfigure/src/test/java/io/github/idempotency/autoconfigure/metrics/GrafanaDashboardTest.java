package io.github.idempotency.autoconfigure.metrics;

import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every metric and label the Grafana dashboard ({@code docs/grafana}) queries exists under
 * that name in a Prometheus scrape of the starter's meters.
 */
class GrafanaDashboardTest {

	private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "idempotency-dashboard.json");

	private static final Pattern METRIC = Pattern.compile("\\b(idempotency_[a-z_]+)\\s*\\{([^}]*)\\}");

	private static final Pattern LABEL = Pattern.compile("([a-z_]+)\\s*(?:=~|=|!=|!~)");

	private static final Pattern BY = Pattern.compile("by \\(([^)]*)\\)");

	@Test
	void everyQueriedMetricAndLabelIsScraped() throws IOException {
		String scrape = scrape();
		List<String> expressions = expressions();
		assertThat(expressions).hasSizeGreaterThanOrEqualTo(7);
		for (String expression : expressions) {
			Matcher metrics = METRIC.matcher(expression);
			Set<String> names = new LinkedHashSet<>();
			Set<String> labels = new LinkedHashSet<>();
			while (metrics.find()) {
				names.add(metrics.group(1));
				Matcher label = LABEL.matcher(metrics.group(2));
				while (label.find()) {
					labels.add(label.group(1));
				}
			}
			Matcher by = BY.matcher(expression);
			while (by.find()) {
				for (String label : by.group(1).split(",")) {
					labels.add(label.trim());
				}
			}
			assertThat(names).as(expression).isNotEmpty();
			for (String name : names) {
				List<String> lines = scrape.lines().filter((line) -> line.startsWith(name + "{")).toList();
				assertThat(lines).as("scraped series of " + name).isNotEmpty();
				for (String label : labels) {
					assertThat(lines).as(name + " has the label " + label)
						.anySatisfy((line) -> assertThat(line).contains(label + "=\""));
				}
			}
		}
	}

	private static List<String> expressions() throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
		List<String> expressions = new ArrayList<>();
		for (JsonNode panel : dashboard.get("panels")) {
			for (JsonNode target : panel.get("targets")) {
				expressions.add(target.get("expr").asString());
			}
		}
		for (JsonNode variable : dashboard.get("templating").get("list")) {
			if (variable.path("query").asString("").startsWith("label_values")) {
				expressions.add(variable.get("query").asString().replaceFirst("label_values\\((idempotency_[a-z_]+)\\s*,",
						"$1{} by (").replace(")", ")"));
			}
		}
		return expressions;
	}

	/** The meters of one run that met every outcome, in Prometheus' text format. */
	private static String scrape() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		MicrometerIdempotencyObserver observer = new MicrometerIdempotencyObserver(registry, "jdbc");
		for (Outcome outcome : Outcome.values()) {
			observer.onRequest("payment", outcome);
		}
		observer.onConflict("payment");
		observer.onTakeover("payment");
		observer.onLeaseLost("payment");
		for (StoreOperation operation : StoreOperation.values()) {
			observer.onStoreCall(operation, 1_000_000, true);
			observer.onStoreCall(operation, 1_000_000, false);
		}
		return registry.scrape();
	}

}
