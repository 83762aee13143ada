package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * RFC 6125 DNS-ID matching: exact names, and a wildcard only as a whole left-most label under two
 * more.
 */
class DnsNamesTest {
  @Test
  void exactNamesMatchCaseInsensitivelyAndWithoutTheRootDot() {
    assertThat(DnsNames.matches("engine.inference.svc", "engine.inference.svc")).isTrue();
    assertThat(DnsNames.matches("Engine.Inference.SVC", "engine.inference.svc")).isTrue();
    assertThat(DnsNames.matches("engine.inference.svc.", "engine.inference.svc")).isTrue();
    assertThat(DnsNames.matches("engine.inference.svc", "engine.inference")).isFalse();
    assertThat(DnsNames.matches("", "engine")).isFalse();
  }

  @Test
  void aWildcardStandsForExactlyOneWholeLabel() {
    assertThat(DnsNames.matches("*.inference.svc", "engine.inference.svc")).isTrue();
    assertThat(DnsNames.matches("*.inference.svc", "a.engine.inference.svc")).isFalse();
    assertThat(DnsNames.matches("*.inference.svc", "inference.svc")).isFalse();
    assertThat(DnsNames.matches("*.inference.svc", ".inference.svc")).isFalse();
  }

  @Test
  void wildcardsTheJdkWouldAcceptButRfc6125DiscouragesAreRefused() {
    assertThat(DnsNames.matches("e*.inference.svc", "engine.inference.svc")).isFalse();
    assertThat(DnsNames.matches("*.svc", "inference.svc"))
        .as("a wildcard over a single label")
        .isFalse();
    assertThat(DnsNames.matches("*.*.svc", "engine.inference.svc")).isFalse();
    assertThat(DnsNames.matches("*", "engine")).isFalse();
  }
}
