package io.kvguard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.probe.EngineText;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What kvguard will echo of an engine's short strings, and what it hides. */
class EngineTextRedactionTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      nullValues = "NULL",
      value = {
        "0.5.22                       | 0.5.22",
        "0.0.0.dev1+gbb737d7a8        | 0.0.0.dev1+gbb737d7a8",
        "prefill                      | prefill",
        "text/plain; version=0.0.4    | text/plain; version=0.0.4",
        "disk-a1                      | disk-a1",
        "0.5.22+api_key=sk-abc        | redacted value",
        "API-KEY=1                    | redacted value",
        "hf_token                     | redacted value",
        "my-Secret-engine             | redacted value",
        "password=hunter2             | redacted value",
        "passwd                       | redacted value",
        "Bearer abc                   | redacted value",
        "authorization                | redacted value",
        "credentials                  | redacted value",
        "sk-live123                   | redacted value",
        "<script>                     | unrecognised value",
        "a\"quote                     | unrecognised value",
        "NULL                         | none",
      })
  void echoedEngineTextIsShapeCheckedThenRedacted(String value, String shown) {
    assertThat(EngineText.safe(value)).isEqualTo(shown);
  }

  @ParameterizedTest
  @CsvSource({"65"})
  void overlongValuesAreNotEchoed(int length) {
    assertThat(EngineText.safe("a".repeat(length))).isEqualTo(EngineText.UNRECOGNISED);
  }
}
