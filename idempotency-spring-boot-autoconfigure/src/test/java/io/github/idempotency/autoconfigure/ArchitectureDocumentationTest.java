package io.github.idempotency.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.NodeList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/architecture.md's layout is the build's: its "Modules" table names exactly the
 * modules of the root {@code pom.xml}, and its "Packages" table ({@code | package | module |
 * ... |}) every package of their main sources, each in the module that holds it, and no
 * package that does not exist. A module or a package moved is a row of these tables
 * changed.
 */
class ArchitectureDocumentationTest {

	private static final Pattern NAME = Pattern.compile("`([^`]+)`");

	private final Path root = Path.of("").toAbsolutePath().getParent();

	private final Path page = this.root.resolve("docs/architecture.md");

	@Test
	void theModulesTableNamesEveryModuleOfTheBuild() throws Exception {
		TreeSet<String> documented = new TreeSet<>();
		for (List<String> row : table("module")) {
			Matcher names = NAME.matcher(row.get(0));
			while (names.find()) {
				documented.add(names.group(1));
			}
		}
		TreeSet<String> modules = modules();
		assertThat(modules).as("the modules of the root pom.xml").contains("idempotency-core");
		List<String> problems = new ArrayList<>();
		modules.stream()
			.filter((module) -> !documented.contains(module))
			.forEach((module) -> problems.add(module + " is missing from the module table"));
		documented.stream()
			.filter((module) -> !modules.contains(module))
			.forEach((module) -> problems.add(module + " is in the module table, but is no module of the root pom.xml"));
		assertThat(problems).as("docs/architecture.md's module table against the build").isEmpty();
	}

	@Test
	void thePackagesTableNamesEveryMainPackageInItsModule() throws Exception {
		TreeSet<String> documented = new TreeSet<>();
		for (List<String> row : table("package")) {
			documented.add(name(row.get(1)) + ": " + name(row.get(0)));
		}
		TreeSet<String> actual = new TreeSet<>();
		for (String module : modules()) {
			Path sources = this.root.resolve(module).resolve("src/main/java");
			if (Files.isDirectory(sources)) {
				for (String pkg : packages(sources)) {
					actual.add(module + ": " + pkg);
				}
			}
		}
		List<String> problems = new ArrayList<>();
		actual.stream()
			.filter((pkg) -> !documented.contains(pkg))
			.forEach((pkg) -> problems.add(pkg + " is missing from the packages table"));
		documented.stream()
			.filter((pkg) -> !actual.contains(pkg))
			.forEach((pkg) -> problems.add(pkg + " is in the packages table, but there is no such package there"));
		assertThat(actual).as("the main packages of the build").contains("idempotency-core: io.github.idempotency");
		assertThat(problems).as("docs/architecture.md's packages table against the sources").isEmpty();
	}

	/** The modules of the root {@code pom.xml}. */
	private TreeSet<String> modules() throws Exception {
		NodeList modules = DocumentBuilderFactory.newInstance()
			.newDocumentBuilder()
			.parse(this.root.resolve("pom.xml").toFile())
			.getElementsByTagName("module");
		TreeSet<String> names = new TreeSet<>();
		for (int i = 0; i < modules.getLength(); i++) {
			names.add(modules.item(i).getTextContent().trim());
		}
		return names;
	}

	/** Every package with a Java source file under {@code sources}. */
	private static TreeSet<String> packages(Path sources) throws IOException {
		TreeSet<String> packages = new TreeSet<>();
		try (Stream<Path> files = Files.walk(sources)) {
			files.filter((file) -> file.toString().endsWith(".java"))
				.map((file) -> sources.relativize(file.getParent()).toString().replace(file.getFileSystem().getSeparator(), "."))
				.forEach(packages::add);
		}
		return packages;
	}

	/**
	 * The rows of the page's first table whose header's first cell is {@code first}, each
	 * as its cells.
	 */
	private List<List<String>> table(String first) throws IOException {
		List<List<String>> rows = new ArrayList<>();
		boolean inTable = false;
		for (String line : Files.readAllLines(this.page)) {
			if (!line.startsWith("|")) {
				if (inTable) {
					break;
				}
				continue;
			}
			List<String> cells = cells(line);
			if (!inTable && cells.get(0).equals(first)) {
				inTable = true;
			}
			else if (inTable && !cells.get(0).matches(":?-+:?")) {
				rows.add(cells);
			}
		}
		assertThat(rows).as("the rows of the table of docs/architecture.md headed '| " + first + " |'").isNotEmpty();
		return rows;
	}

	private static List<String> cells(String row) {
		List<String> cells = new ArrayList<>();
		String[] split = row.split("(?<!\\\\)\\|");
		for (int i = 1; i < split.length; i++) {
			cells.add(split[i].trim());
		}
		return cells;
	}

	/** The one name a cell gives in backticks. */
	private static String name(String cell) {
		Matcher name = NAME.matcher(cell);
		assertThat(name.find()).as("a name in backticks in '" + cell + "'").isTrue();
		return name.group(1);
	}

}
