package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The scan of an answer's content for probe markers (issue 26 §4), one row per kind of answer. */
class MarkerScanTest {
  private static final ProbeMarker OWN = new ProbeMarker(123_456_789L);
  private static final ProbeMarker OTHER = new ProbeMarker(98_765_432_101L);
  private static final ProbeMarker NEVER_SENT = new ProbeMarker(55_555_555_555L);
  private static final List<ProbeMarker> SENT = List.of(OWN, OTHER);

  private static long[] ids(ProbeMarker marker) {
    long[] ids = new long[ProbeMarker.SYMBOLS];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = marker.tokenId(i);
    }
    return ids;
  }

  private static String words(ProbeMarker marker) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < ProbeMarker.SYMBOLS; i++) {
      text.append(' ').append(marker.word(i));
    }
    return text.toString();
  }

  private static long[] concat(long[]... parts) {
    return Stream.of(parts).flatMapToLong(java.util.Arrays::stream).toArray();
  }

  private static AnswerContent tokens(long[]... lists) {
    return new AnswerContent.TokenIds(List.of(lists));
  }

  static Stream<Arguments> answers() {
    long[] otherIds = ids(OTHER);
    long[] cut = java.util.Arrays.copyOf(otherIds, ProbeMarker.SYMBOLS - 1);
    long[] reversed = new long[otherIds.length];
    for (int i = 0; i < otherIds.length; i++) {
      reversed[i] = otherIds[otherIds.length - 1 - i];
    }
    return Stream.of(
        Arguments.of("another probe's IDs", tokens(otherIds), "HeldOther"),
        Arguments.of(
            "another probe's IDs amid other tokens",
            tokens(concat(new long[] {7, 100, 13}, otherIds, new long[] {2})),
            "HeldOther"),
        Arguments.of(
            "another probe's IDs in the second list (SGLang's prompt_token_ids)",
            tokens(new long[] {42}, concat(new long[] {100}, otherIds)),
            "HeldOther"),
        Arguments.of("its own and another's", tokens(concat(ids(OWN), otherIds)), "HeldOther"),
        Arguments.of("its own IDs only (an echo)", tokens(ids(OWN)), "HeldNoOther own"),
        Arguments.of("a marker never sent", tokens(ids(NEVER_SENT)), "HeldNoOther"),
        Arguments.of("another's marker cut by one", tokens(cut), "HeldNoOther"),
        Arguments.of(
            "another's marker broken by the filler",
            tokens(concat(cut, new long[] {100}, new long[] {otherIds[7]})),
            "HeldNoOther"),
        Arguments.of("another's marker reversed", tokens(reversed), "HeldNoOther"),
        Arguments.of("one output token", tokens(new long[] {104}), "HeldNoOther"),
        Arguments.of("no tokens", tokens(new long[0]), "HeldNoOther"),
        Arguments.of("another probe's words", new AnswerContent.Text(words(OTHER)), "HeldOther"),
        Arguments.of(
            "another probe's words inside text",
            new AnswerContent.Text("Sure:" + words(OTHER) + " a a a\nthanks"),
            "HeldOther"),
        Arguments.of(
            "another's words glued together",
            new AnswerContent.Text(words(OTHER).replace(" ", "")),
            "HeldNoOther"),
        Arguments.of("its own words", new AnswerContent.Text(words(OWN)), "HeldNoOther own"),
        Arguments.of("ordinary text", new AnswerContent.Text("the answer is b c d"), "HeldNoOther"),
        Arguments.of(
            "unreadable", new AnswerContent.Unreadable("the answer was empty"), "Unchecked"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("answers")
  void findsAnotherProbesMarkerOnlyWholeAndInOrder(
      String what, AnswerContent content, String expected) {
    MarkerFinding found = MarkerScan.scan(OWN, SENT, content);

    String kind = found.getClass().getSimpleName();
    if (found instanceof MarkerFinding.HeldNoOther none && none.own()) {
      kind += " own";
    }
    assertThat(kind).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("answers")
  void thePhraseNamesTheFindingAndNoMarker(String what, AnswerContent content, String expected) {
    String phrase = MarkerScan.scan(OWN, SENT, content).phrase();

    assertThat(phrase)
        .startsWith(
            switch (expected) {
              case "HeldOther" ->
                  "the answer held another probe's marker (evidence of another request's KV)";
              case "Unchecked" ->
                  "the answer's content could not be checked for markers (the answer was empty)";
              default -> "the answer held no other probe's marker";
            });
    for (ProbeMarker marker : List.of(OWN, OTHER)) {
      assertThat(phrase).doesNotContain(words(marker).strip());
      assertThat(phrase).doesNotContain(String.valueOf(marker.code()));
      assertThat(phrase).doesNotContain(String.valueOf(marker.tokenId(0)));
    }
  }

  @org.junit.jupiter.api.Test
  void anAnswerTooShortToHoldAMarkerSaysItIsNoEvidence() {
    // The probe asks for one output token: "no other probe's marker" alone would read as a clean
    // bill where nothing could have been found.
    assertThat(MarkerScan.scan(OWN, SENT, tokens(new long[] {104})).phrase())
        .isEqualTo(
            "the answer held no other probe's marker (it carried 1 token or word, too few to hold"
                + " one: this is no evidence either way)");
    assertThat(MarkerScan.scan(OWN, SENT, tokens(new long[0], new long[] {7, 8})).phrase())
        .contains("it carried 2 tokens or words, too few to hold one");
    assertThat(MarkerScan.scan(OWN, SENT, new AnswerContent.Text(" b")).phrase())
        .contains("too few to hold one");
    assertThat(MarkerScan.scan(OWN, SENT, tokens(ids(NEVER_SENT))).phrase())
        .isEqualTo("the answer held no other probe's marker");
  }

  @org.junit.jupiter.api.Test
  void aMarkersValueIsNeverShown() {
    assertThat(OTHER.toString()).doesNotContain(String.valueOf(OTHER.code()));
  }

  @org.junit.jupiter.api.Test
  void symbolsAreTheCodesDigitsAndEveryMarkerIsWithinTheAlphabet() {
    SplittableRandom random = new SplittableRandom(26);
    for (int n = 0; n < 1_000; n++) {
      ProbeMarker marker = ProbeMarker.drawn(random);
      int[] symbols = new int[ProbeMarker.SYMBOLS];
      for (int i = 0; i < symbols.length; i++) {
        symbols[i] = marker.symbol(i);
        assertThat(marker.tokenId(i))
            .isBetween(
                ProbeMarker.FIRST_TOKEN_ID, ProbeMarker.FIRST_TOKEN_ID + ProbeMarker.ALPHABET - 1)
            .isNotEqualTo(100);
        assertThat(marker.word(i)).matches("[b-z]");
      }
      assertThat(ProbeMarker.codeOf(symbols, 0)).isEqualTo(marker.code());
    }
  }
}
