package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Specs a user may write, checked against the generated CRD: every valid-*.yaml is admitted, every
 * invalid-*.yaml is rejected for the reason its first line (# expect: ...) names.
 */
class CrdValidationTest {
  private static final Path CASES = Path.of("src/test/resources/crd-validation");
  private static CrdRules rules;

  @BeforeAll
  static void loadCrd() throws IOException {
    rules =
        new CrdRules(Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml"));
  }

  static Stream<Path> valid() throws IOException {
    return Files.list(CASES).filter(p -> p.getFileName().toString().startsWith("valid-")).sorted();
  }

  static Stream<Path> invalid() throws IOException {
    return Files.list(CASES)
        .filter(p -> p.getFileName().toString().startsWith("invalid-"))
        .sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("valid")
  void validSpecsAreAdmitted(Path file) throws IOException {
    assertThat(rules.violations(Files.readString(file))).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void invalidSpecsAreRejectedForTheirReason(Path file) throws IOException {
    String text = Files.readString(file);
    String expected = text.lines().findFirst().orElseThrow().replaceFirst("^# expect: ", "");
    List<String> violations = rules.violations(text);
    assertThat(violations).as("%s must be rejected", file).isNotEmpty();
    assertThat(String.join("\n", violations)).contains(expected);
  }
}
