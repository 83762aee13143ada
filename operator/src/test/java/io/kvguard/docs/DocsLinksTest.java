package io.kvguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every link between the README and the docs reaches a file that exists and, when it names a
 * section, a heading that is there: a user following "see reliability.md, section N" lands where
 * the text says. Anchors as GitHub makes them from a heading: lower case, punctuation but hyphens
 * and underscores dropped, spaces as hyphens, a repeated heading suffixed -1, -2.
 */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern FENCE = Pattern.compile("(?s)```.*?```");
  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6}\\s+(.+?)\\s*$");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  @Test
  void everyLinkReachesAFileAndEveryAnchorAHeading() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    Map<Path, Set<String>> anchors = new HashMap<>();
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path page : pages) {
      Matcher link = LINK.matcher(prose(page));
      while (link.find()) {
        String target = link.group(1);
        if (target.matches("^[a-z]+:.*")) {
          continue;
        }
        String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
        String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        checked++;
        if (!Files.exists(resolved)) {
          broken.add(page + ": " + target + " (no such file)");
        } else if (anchor != null
            && resolved.toString().endsWith(".md")
            && !anchors.computeIfAbsent(resolved, DocsLinksTest::headings).contains(anchor)) {
          broken.add(page + ": " + target + " (no such heading)");
        }
      }
    }
    assertThat(checked).isGreaterThan(50);
    assertThat(broken).isEmpty();
  }

  /** The page without its code blocks, where "](" is code, not a link. */
  private static String prose(Path page) {
    try {
      return FENCE.matcher(Files.readString(page)).replaceAll("");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Set<String> headings(Path page) {
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    Matcher heading = HEADING.matcher(prose(page));
    while (heading.find()) {
      String slug =
          heading
              .group(1)
              .replace("`", "")
              .toLowerCase(Locale.ROOT)
              .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
              .replace(' ', '-');
      Integer n = seen.merge(slug, 0, (a, b) -> a + 1);
      anchors.add(n == 0 ? slug : slug + "-" + n);
    }
    return anchors;
  }
}
