package io.github.idempotency.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documentation renders as written on GitHub: every code block of README.md,
 * CONTRIBUTING.md, CHANGELOG.md and {@code docs/*.md} is closed (an open one turns the
 * rest of its page into code), and every link to one of these pages, or to a heading in
 * one, finds it, inline ({@code [text](page.md#heading)}) or by reference
 * ({@code [name]: page.md#heading}). Headings are named as GitHub names them: lower case, every character but
 * letters, digits, spaces, {@code -} and {@code _} dropped (an en dash too), each space a
 * {@code -}, and {@code -1}, {@code -2} after a name taken before on the page.
 */
class DocumentationLinksTest {

	private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~).*");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s#]*)(?:#([^)\\s]*))?\\)");

	/** A reference link's definition: {@code [name]: page.md#heading}. */
	private static final Pattern REFERENCE = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s+([^\\s#]*)(?:#(\\S*))?");

	private static final Pattern INLINE_LINK = Pattern.compile("\\[([^\\]]*)\\]\\([^)]*\\)");

	private final Path root = Path.of("").toAbsolutePath().getParent();

	@Test
	void everyCodeBlockIsClosedAndEveryLinkFindsItsPageAndHeading() throws IOException {
		List<Path> pages = pages();
		assertThat(pages).as("the documentation pages").contains(this.root.resolve("README.md"));
		Map<Path, Set<String>> headings = new HashMap<>();
		List<String> problems = new ArrayList<>();
		for (Path page : pages) {
			headings.put(page, headings(page, problems));
		}
		for (Path page : pages) {
			List<String> lines = prose(page);
			for (int n = 0; n < lines.size(); n++) {
				for (Pattern form : List.of(LINK, REFERENCE)) {
					Matcher link = form.matcher(lines.get(n));
					while (link.find()) {
						String target = link.group(1);
						if (target.contains(":") || !(target.isEmpty() || target.endsWith(".md"))) {
							continue;
						}
						Path linked = target.isEmpty() ? page : page.getParent().resolve(target).normalize();
						String where = this.root.relativize(page) + ":" + (n + 1) + ": ";
						if (!Files.isRegularFile(linked)) {
							problems.add(where + target + " does not exist");
						}
						else if (link.group(2) != null && headings.containsKey(linked)
								&& !headings.get(linked).contains(link.group(2))) {
							problems.add(where + "#" + link.group(2) + " names no heading of " + this.root.relativize(linked));
						}
					}
				}
			}
		}
		assertThat(problems).as("the documentation as GitHub renders it").isEmpty();
	}

	@Test
	void headingsAreNamedAsGitHubNamesThem() {
		assertThat(anchor("The duplicate's read narrowed (issue 34, 2026-11-26, 06:20\u201308:00 UTC)"))
			.isEqualTo("the-duplicates-read-narrowed-issue-34-2026-11-26-06200800-utc");
		assertThat(anchor("`idempotency.jdbc` \u2014 the [table](stores.md)")).isEqualTo("idempotencyjdbc--the-table");
	}

	private List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>();
		for (String name : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
			pages.add(this.root.resolve(name));
		}
		try (Stream<Path> docs = Files.list(this.root.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

	/**
	 * The names of a page's headings; an unclosed code block is a problem.
	 */
	private Set<String> headings(Path page, List<String> problems) throws IOException {
		Set<String> names = new HashSet<>();
		Map<String, Integer> taken = new HashMap<>();
		int opened = -1;
		List<String> lines = Files.readAllLines(page);
		for (int n = 0; n < lines.size(); n++) {
			String line = lines.get(n);
			if (FENCE.matcher(line).matches()) {
				opened = (opened < 0) ? n : -1;
				continue;
			}
			Matcher heading = HEADING.matcher(line);
			if (opened < 0 && heading.matches()) {
				String name = anchor(heading.group(1));
				Integer before = taken.merge(name, 0, (count, zero) -> count + 1);
				names.add((before == 0) ? name : name + "-" + before);
			}
		}
		if (opened >= 0) {
			problems.add(this.root.relativize(page) + ":" + (opened + 1) + ": this code block is never closed");
		}
		return names;
	}

	/**
	 * A page's lines, with the lines of its code blocks blank.
	 */
	private static List<String> prose(Path page) throws IOException {
		List<String> lines = new ArrayList<>();
		boolean inCode = false;
		for (String line : Files.readAllLines(page)) {
			boolean fence = FENCE.matcher(line).matches();
			inCode = fence != inCode;
			lines.add((fence || inCode) ? "" : line);
		}
		return lines;
	}

	private static String anchor(String heading) {
		String text = INLINE_LINK.matcher(heading).replaceAll("$1").toLowerCase();
		StringBuilder anchor = new StringBuilder();
		text.codePoints().forEach((c) -> {
			if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
				anchor.appendCodePoint(c);
			}
			else if (c == ' ') {
				anchor.append('-');
			}
		});
		return anchor.toString();
	}

}
