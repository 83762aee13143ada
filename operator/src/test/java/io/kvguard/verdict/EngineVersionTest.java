package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class EngineVersionTest {

  @ParameterizedTest
  @ValueSource(strings = {"0.5.21", "v0.5.22", "2.2.0", "3", "0.10.1.1", "0.6.4.post1", " 1.2.3 "})
  void releaseVersionsAreKnown(String text) {
    assertThat(EngineVersion.parse(text).isRelease()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0.0.0.dev1+gbb737d7a8",
        "b4567-abc",
        "0.5.22rc1",
        "0.11.0+cu128",
        "0.0.0",
        "v",
        "",
        "1.2.3.4.5",
        "unrecognised value",
        "3.0.2-dev0",
        "1..2"
      })
  void everythingElseIsUnknown(String text) {
    EngineVersion version = EngineVersion.parse(text);
    assertThat(version.isRelease()).isFalse();
    assertThat(version.text()).isEqualTo(text);
  }

  @ParameterizedTest
  @CsvSource({
    "0.5.21, 0.5.22, true",
    "0.5.22, 0.5.22, false",
    "v0.5.22, 0.5.22, false",
    "0.5.23, 0.5.22, false",
    "0.5, 0.5.0, false",
    "0.4.99, 0.5, true",
    "0.10.0, 0.9.9, false",
    "0.6.4, 0.6.4.post1, true",
    "0.6.4.post1, 0.6.4, false",
    "2.2.0, 2.3.1, true",
  })
  void comparesPartByPartNumerically(String left, String right, boolean older) {
    assertThat(EngineVersion.parse(left).isOlderThan(EngineVersion.parse(right))).isEqualTo(older);
  }

  @org.junit.jupiter.api.Test
  void unknownVersionsDoNotCompare() {
    assertThatThrownBy(() -> EngineVersion.parse("b4567").isOlderThan(EngineVersion.parse("1.0")))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> EngineVersion.release("0.0.0.dev1"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
