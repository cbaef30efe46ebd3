package io.github.idempotency.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing stale in the documentation: every property the configuration metadata declares
 * (the file the build generates from the properties classes and
 * {@code additional-spring-configuration-metadata.json}) is in a
 * {@code | property | default | ... |} table of README.md or {@code docs/*.md} with the
 * metadata's default, and such a table names no property that does not exist. The BOM
 * lists every published module at the reactor's version.
 */
class PropertiesDocumentationTest {

	private static final Pattern PROPERTY_TABLE_HEADER = Pattern.compile("^\\|\\s*property\\s*\\|\\s*default\\s*\\|.*");

	private static final Pattern SEPARATOR_ROW = Pattern.compile("^\\|[\\s|:-]+\\|\\s*$");

	private final Path module = Path.of("").toAbsolutePath();

	private final Path root = this.module.getParent();

	@Test
	void everyPropertyIsDocumentedWithItsDefault() throws IOException {
		Map<String, JsonNode> metadata = metadata();
		assertThat(metadata).as("the generated configuration metadata").containsKey("idempotency.lease-ttl");
		Map<String, List<DocumentedProperty>> documented = documented();
		List<String> problems = new ArrayList<>();
		metadata.forEach((name, property) -> {
			List<DocumentedProperty> rows = documented.get(name);
			if (rows == null) {
				problems.add(name + " is in no property table of README.md or docs/*.md");
				return;
			}
			JsonNode defaultValue = property.get("defaultValue");
			if (defaultValue == null || defaultValue.isNull()) {
				return;
			}
			String expected = render(defaultValue);
			for (DocumentedProperty row : rows) {
				if (!agrees(row.defaultCell(), expected)) {
					problems.add(name + " is documented in " + row.file() + " with the default '" + row.defaultCell()
							+ "'; the metadata's is '" + expected + "'");
				}
			}
		});
		documented.forEach((name, rows) -> {
			if (!metadata.containsKey(name)) {
				rows.forEach((row) -> problems.add(row.file() + " documents " + name + ", which the metadata does not declare"));
			}
		});
		assertThat(problems).as("the documentation against the configuration metadata").isEmpty();
	}

	@Test
	void theBomListsEveryPublishedModuleAtTheReactorsVersion() throws Exception {
		Document parent = xml(this.root.resolve("pom.xml"));
		Document bom = xml(this.root.resolve("idempotency-bom/pom.xml"));
		String version = childText(parent.getDocumentElement(), "version");
		assertThat(childText(bom.getDocumentElement(), "version")).as("the BOM's version").isEqualTo(version);
		TreeSet<String> published = new TreeSet<>();
		NodeList modules = parent.getElementsByTagName("module");
		for (int i = 0; i < modules.getLength(); i++) {
			String module = modules.item(i).getTextContent().trim();
			Document pom = xml(this.root.resolve(module).resolve("pom.xml"));
			boolean skipped = pom.getElementsByTagName("idempotency.publish.skip").getLength() > 0
					&& "true".equals(pom.getElementsByTagName("idempotency.publish.skip").item(0).getTextContent().trim());
			if (!skipped && !module.equals("idempotency-bom")) {
				published.add(childText(pom.getDocumentElement(), "artifactId"));
			}
		}
		TreeSet<String> listed = new TreeSet<>();
		NodeList dependencies = bom.getElementsByTagName("dependency");
		for (int i = 0; i < dependencies.getLength(); i++) {
			Element dependency = (Element) dependencies.item(i);
			listed.add(childText(dependency, "artifactId"));
			assertThat(childText(dependency, "version")).as("the BOM's version of " + childText(dependency, "artifactId"))
				.isEqualTo(version);
		}
		assertThat(listed).as("the modules the BOM lists").isEqualTo(published)
			.contains("idempotency-core", "idempotency-test", "idempotency-spring-boot-starter");
	}

	private Map<String, JsonNode> metadata() throws IOException {
		Path file = this.module.resolve("target/classes/META-INF/spring-configuration-metadata.json");
		JsonNode root = JsonMapper.builder().build().readTree(Files.readString(file));
		Map<String, JsonNode> properties = new LinkedHashMap<>();
		for (JsonNode property : root.get("properties")) {
			properties.put(property.get("name").asString(), property);
		}
		return properties;
	}

	private Map<String, List<DocumentedProperty>> documented() throws IOException {
		List<Path> files = new ArrayList<>();
		files.add(this.root.resolve("README.md"));
		try (Stream<Path> docs = Files.list(this.root.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(files::add);
		}
		Map<String, List<DocumentedProperty>> documented = new LinkedHashMap<>();
		for (Path file : files) {
			boolean inTable = false;
			for (String line : Files.readAllLines(file)) {
				if (PROPERTY_TABLE_HEADER.matcher(line).matches()) {
					inTable = true;
				}
				else if (!line.startsWith("|")) {
					inTable = false;
				}
				else if (inTable && !SEPARATOR_ROW.matcher(line).matches()) {
					String[] cells = line.split("(?<!\\\\)\\|");
					String name = cells[1].replace("`", "").trim();
					String defaultCell = cells[2].replace("`", "").trim();
					documented.computeIfAbsent(name, (key) -> new ArrayList<>())
						.add(new DocumentedProperty(this.root.relativize(file).toString(), defaultCell));
				}
			}
		}
		return documented;
	}

	/**
	 * The default as the documentation writes it: a list's elements joined by a comma and a
	 * space, a boolean in lower case, anything else as it is.
	 */
	private static String render(JsonNode value) {
		if (value.isArray()) {
			List<String> elements = new ArrayList<>();
			value.forEach((element) -> elements.add(element.asString()));
			return String.join(", ", elements);
		}
		return value.isBoolean() ? String.valueOf(value.asBoolean()) : value.asString();
	}

	/**
	 * The documented default is the metadata's, possibly followed by an explanation, as in
	 * {@code 2147483647 (Ordered.LOWEST_PRECEDENCE)}.
	 */
	private static boolean agrees(String documented, String expected) {
		return documented.equals(expected) || documented.startsWith(expected + " ");
	}

	private static Document xml(Path file) throws Exception {
		return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
	}

	private static String childText(Element element, String name) {
		for (Node child = element.getFirstChild(); child != null; child = child.getNextSibling()) {
			if (child instanceof Element && name.equals(child.getNodeName())) {
				return child.getTextContent().trim();
			}
		}
		throw new IllegalStateException("No <" + name + "> in <" + element.getNodeName() + ">");
	}

	private record DocumentedProperty(String file, String defaultCell) {
	}

}
