package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.demo.FakeEngine.Answer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * An engine's answer as its own source writes it, from {@code src/test/resources/engines/<engine>-<version>/}. Each
 * fixture opens with a {@code # source:} line naming the repository, path and version it was derived from; a JSON
 * answer is served without that line, a Prometheus page with it (a comment there, as in any exposition).
 */
final class EngineFixture {
  private EngineFixture() {}

  static String text(String name) {
    try (InputStream in = EngineFixture.class.getResourceAsStream("/engines/" + name)) {
      assertThat(in).as("fixture engines/" + name).isNotNull();
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(text).as("engines/" + name + " names its source on its first line").startsWith("# source: ");
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Answer prometheus(String name) {
    return Answer.prometheus(text(name));
  }

  static Answer json(String name) {
    String text = text(name);
    return Answer.json(text.substring(text.indexOf('\n') + 1));
  }
}
