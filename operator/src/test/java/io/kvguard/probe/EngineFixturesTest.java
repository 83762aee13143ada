package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.testing.EngineFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Engine fixtures are reviewable: named after engine and version, each folder citing the source it
 * reproduces.
 */
class EngineFixturesTest {
  private static final Path ENGINES = Path.of("src/test/resources/engines");
  private static final Pattern FOLDER =
      Pattern.compile("(sglang|vllm|tgi|trtllm|llamacpp|ollama)-[0-9a-z][0-9a-z.\\-]*");

  private static List<Path> folders() throws IOException {
    try (Stream<Path> entries = Files.list(ENGINES)) {
      return entries.filter(Files::isDirectory).sorted().toList();
    }
  }

  @Test
  void everyFolderIsNamedAfterAnEngineAndAVersion() throws IOException {
    assertThat(folders())
        .isNotEmpty()
        .allSatisfy(
            folder ->
                assertThat(folder.getFileName().toString())
                    .as("fixture folder name")
                    .matches(FOLDER));
  }

  @Test
  void everyFolderOpensWithTheSourceItWasDerivedFromAndNamesEveryFile() throws IOException {
    for (Path folder : folders()) {
      Path source = folder.resolve("SOURCE.md");
      assertThat(source).as("%s has a SOURCE.md", folder).exists();
      String text = Files.readString(source);
      assertThat(text.lines().findFirst().orElse(""))
          .as("first line of %s", source)
          .startsWith("Derived from ")
          .containsPattern("[A-Za-z0-9-]+/[A-Za-z0-9._-]+ `[^`]+`");
      try (Stream<Path> files = Files.list(folder)) {
        files
            .filter(f -> !f.getFileName().toString().equals("SOURCE.md"))
            .forEach(
                file ->
                    assertThat(text)
                        .as("%s names %s", source, file.getFileName())
                        .contains("`" + file.getFileName() + "`"));
      }
    }
  }

  @Test
  void everyAnswerIsARawHttpAnswer() throws IOException {
    for (Path folder : folders()) {
      try (Stream<Path> files = Files.list(folder)) {
        for (Path file : files.filter(f -> f.toString().endsWith(".http")).toList()) {
          assertThat(EngineFixtures.parse(Files.readAllBytes(file), file.toString()).status())
              .as("%s", file)
              .isBetween(100, 599);
        }
      }
    }
  }
}
