package io.kvguard.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A write's message names what it announces, or as many as fit in 1024 characters and counts the
 * rest.
 */
class EventMessagesTest {
  private static List<Announcement> pods(int n, String detail) {
    List<Announcement> pods = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      pods.add(
          new Announcement(
              "pod serve-" + i + " (role serve): " + detail,
              "serve-" + i + " (role serve): " + detail));
    }
    return pods;
  }

  @Test
  void oneTransitionReadsAsItAlwaysDid() {
    assertThat(
            EventMessages.of(
                1, "turned ProbeFailed", pods(1, "GET /server_info answered HTTP 503")))
        .isEqualTo("pod serve-0 (role serve): GET /server_info answered HTTP 503");
  }

  @Test
  void aMassFailureNamesTheFirstPodsAndCountsTheRestWithinTheApiServersLimit() {
    String message =
        EventMessages.of(37, "turned ProbeFailed", pods(37, "GET /server_info answered HTTP 503"));
    assertThat(message)
        .startsWith(
            "37 pods turned ProbeFailed: serve-0 (role serve): GET /server_info answered HTTP 503; "
                + "serve-1 (role serve)")
        .hasSizeLessThanOrEqualTo(EventMessages.MAX_LENGTH);
    Matcher more = Pattern.compile(" and (\\d+) more$").matcher(message);
    assertThat(more.find()).isTrue();
    int named = message.split("; ").length;
    assertThat(named + Integer.parseInt(more.group(1))).isEqualTo(37);
  }

  @Test
  void transitionsOnlyCountedStillCountInTheTotal() {
    // The recorder keeps 64 announcements per write and counts the others.
    String message = EventMessages.of(1_000, "verified", pods(3, "ok"));
    assertThat(message)
        .isEqualTo(
            "1000 pods verified: serve-0 (role serve): ok; serve-1 (role serve): ok; "
                + "serve-2 (role serve): ok and 997 more");
  }

  @Test
  void allOfAFewFitWithoutAMore() {
    assertThat(EventMessages.of(2, "verified", pods(2, "ok")))
        .isEqualTo("2 pods verified: serve-0 (role serve): ok; serve-1 (role serve): ok");
  }

  @Test
  void anOverlongMessageIsCutToTheLimit() {
    String detail = "x".repeat(3_000);
    assertThat(EventMessages.of(1, "turned ProbeFailed", pods(1, detail)))
        .hasSize(EventMessages.MAX_LENGTH)
        .endsWith("...");
    String many = EventMessages.of(5, "turned ProbeFailed", pods(5, detail));
    assertThat(many)
        .hasSizeLessThanOrEqualTo(EventMessages.MAX_LENGTH)
        .startsWith("5 pods turned ProbeFailed: serve-0")
        .endsWith("... and 4 more");
  }
}
